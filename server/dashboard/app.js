// The dashboard's loop: every second it reads the pool and the tenant's recent jobs (their
// summaries; an operator's: every tenant's, and the workers and tenants of v1/pool), and the
// selected job's record (#job=<id>) until it ends; a 401 stops it until a token is entered.
import { get, storedToken } from "./api.js";
import { highlight } from "./highlight.js";
import { JobStatus, TERMINAL } from "./states.js";
import { drawNoTrace, drawTrace } from "./trace.js";
import { drawCacheRates, drawError, drawFacts, drawJobs, drawOperator, drawOutputs, drawPool, drawTimings, el }
  from "./views.js";

const POLL_MS = 1000;
const $ = (id) => document.getElementById(id);
let openMode = false;
let needsToken = false;  // the API refused the token (or there is none): wait for one
let caller = null;  // {tenant, operator}: whose token the API accepted (v1/me); null until then
let healthText = "connecting…";
let selectedId = null;
let finished = null;  // the selected job's record once terminal: it changes no more
let scrollPending = false;  // a job was picked: bring its detail into view once the list above it is drawn

function showError(error) {
  $("error").textContent = error.status ? `${error.status} ${error.kind}: ${error.message}` : error.message;
  $("error").hidden = false;
}

function drawHeader() {
  const access = openMode ? "open mode: no token needed"
    : caller ? `tenant ${caller.tenant}${caller.operator ? " (operator)" : ""}` : "a token is needed";
  $("health").textContent = `${healthText} · ${access}`;
}

function askForToken(error) {
  needsToken = true;
  caller = null;
  drawHeader();
  $("operator-section").hidden = true;  // an operator's view, until a token is accepted again
  $("token-form").hidden = false;
  $("forget-token").hidden = true;
  if (error) showError(error);
  $("token").focus();
}

async function readHealth() {
  const health = await get("v1/health");
  openMode = health.open_mode;
  const workers = Object.entries(health.workers).map(([target, count]) => `${count} ${target}`).join(", ");
  healthText = `redis ${health.redis} · workers: ${workers}`;
  drawHeader();
}

async function showFile(pre, path, language) {
  try {
    pre.replaceChildren(highlight(await get(path, { text: true }), language));
  } catch (error) {
    pre.replaceChildren(el("span", "muted", error.message));
  }
}

// The finished job's modeled pipe timeline, or why it has none (the API's 404: another target, a
// failed job...).
async function showTrace(id, job) {
  let trace;
  let text;
  try {
    text = await get(`v1/jobs/${id}/trace`, { text: true });
    trace = JSON.parse(text);
  } catch (error) {
    if (error.status === 401) throw error;
    // a 404 says why in the API's words ("job … has no trace: it ran on target 'sim'…")
    const why = error instanceof SyntaxError ? `its trace is not JSON (${error.message})`
      : error.status === 404 ? error.message : `no trace shown: ${error.message}`;
    if (id === selectedId) drawNoTrace($("trace"), why);
    return;
  }
  if (id === selectedId) drawTrace($("trace"), trace, text, job);
}

// What each part of the page shows, as JSON: a part is redrawn only when that changes, so that a
// selection or a hover in it survives the polls.
const drawn = {};
function redraw(part, data, draw) {
  const json = JSON.stringify(data);
  if (drawn[part] !== json) {
    drawn[part] = json;
    draw();
  }
}

// A 401 asks for a token; any other refusal is shown as the API words it.
const report = (error) => (error.status === 401 ? askForToken(error) : showError(error));

// The selected job's draw in flight: a poll that comes meanwhile joins it rather than drawing the
// job again (a second draw would replace the trace under a hover).
let drawing = null;
function drawJob() {
  const id = selectedId;
  if (!id || finished?.id === id) return Promise.resolve();
  if (drawing?.id !== id) {
    const promise = drawSelectedJob(id).finally(() => {
      if (drawing?.promise === promise) drawing = null;
    });
    drawing = { id, promise };
  }
  return drawing.promise;
}

async function drawSelectedJob(id) {
  const job = await get(`v1/jobs/${id}`).catch((error) => {
    if (error.status === 401) throw error;
    return { error };  // e.g. 404: an unknown job, or another tenant's
  });
  if (id !== selectedId) return;  // another job was picked meanwhile
  if (job.id && job.id !== id) {  // a link with its first characters (#job=<12>): the job is its full id
    history.replaceState(null, "", `#job=${job.id}`);
    selectedId = id = job.id;
    markSelectedRow();  // the list may not be redrawn: it was drawn with this id selected before
  }
  if (!job.id) {
    $("job-title").textContent = id;
    $("job-error-message").textContent = job.error.message;
    $("job-error").hidden = false;
    return;
  }
  $("job-title").textContent = `${job.kernel} · ${job.id}`;
  drawFacts($("job-facts"), job);
  $("job-error").hidden = !job.error;
  if (job.error) drawError($("job-error-message"), $("job-error-python"), job.error);
  drawTimings($("timing-chart"), job.timings);
  drawOutputs($("outputs"), job.outputs);
  const warnings = job.warnings.map((warning) => el("li", null, warning));
  $("warnings").replaceChildren(...(warnings.length ? warnings : [el("li", "muted", "none")]));
  $("log").textContent = job.log || "(nothing printed)";
  if (TERMINAL.has(job.status)) {
    await Promise.all([showFile($("source"), `v1/jobs/${id}/source`, "cpp"),
      showFile($("ir"), `v1/jobs/${id}/ir`, "mlir"), showTrace(id, job)]);
    finished = job;
  } else {
    $("source").replaceChildren(el("span", "muted", `not generated yet (${job.status})`));
    $("ir").replaceChildren();
    $("trace").replaceChildren(el("span", "muted", `no trace yet (${job.status})`));
  }
}

async function poll() {
  await readHealth();
  if (needsToken) return;
  if (!caller) {
    caller = await get("v1/me");  // a 401 here asks for another token
    drawHeader();
  }
  // the list's rows are summaries (a queued one placed in its queue): a job's record is read only
  // when it is opened
  // an operator's: every tenant's jobs, and the workers and tenants (v1/pool)
  const everyTenant = caller.operator;
  const [{ targets }, { jobs }, overview] = await Promise.all([get("v1/targets"),
    get(`v1/jobs?limit=20${everyTenant ? "&every_tenant=true" : ""}`), everyTenant ? get("v1/pool") : null]);
  redraw("pool", targets, () => drawPool($("pool"), targets));
  $("operator-section").hidden = !overview;
  if (overview) drawOperator($("workers"), $("tenants"), overview);  // its heartbeats' ages change every round
  redraw("cache", jobs, () => drawCacheRates($("cache-rates"), jobs));
  // a running job's "took" grows: its row is redrawn every round
  const running = jobs.some((job) => job.status === JobStatus.STARTED) && Date.now();
  redraw("jobs", [jobs, selectedId, running, everyTenant], () =>
    drawJobs($("jobs").tBodies[0], jobs, selectedId, (id) => { location.hash = `job=${id}`; }, everyTenant));
  bringJobIntoView();
  await drawJob();
  $("error").hidden = true;
  $("forget-token").hidden = openMode || !storedToken.get();
}

function markSelectedRow() {
  for (const tr of $("jobs").tBodies[0].rows) tr.classList.toggle("selected", tr.dataset.job === selectedId);
}

function bringJobIntoView() {
  if (scrollPending && drawn.jobs) {
    scrollPending = false;
    $("job").scrollIntoView({ block: "start" });
  }
}

function selectFromHash() {
  selectedId = new URLSearchParams(location.hash.slice(1)).get("job");
  finished = null;
  $("job").hidden = !selectedId;
  scrollPending = Boolean(selectedId);
  const parts = ["job-title", "job-facts", "job-error-message", "job-error-python", "timing-chart", "trace", "outputs",
    "warnings", "log", "source", "ir"];
  for (const part of parts) {
    $(part).replaceChildren();  // the previous job's, until this one's arrive
  }
  $("job-error").hidden = true;
  markSelectedRow();
  bringJobIntoView();
  if (!needsToken) drawJob().catch(report);
}

$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  storedToken.set($("token").value.trim());
  $("token").value = "";
  $("token-form").hidden = true;
  needsToken = false;
});
$("forget-token").addEventListener("click", () => {
  storedToken.forget();
  askForToken(null);
});
window.addEventListener("hashchange", selectFromHash);

async function run() {
  await readHealth().catch(showError);
  if (!openMode && !storedToken.get()) askForToken(null);
  selectFromHash();
  for (;;) {
    await poll().catch(report);
    await new Promise((wake) => setTimeout(wake, POLL_MS));
  }
}

run();
