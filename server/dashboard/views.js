// What the page draws from the API's answers; every value goes in as text.
import { highlight } from "./highlight.js";
import { JobStatus } from "./states.js";

// An element with its class and children (strings become text nodes).
export function el(tag, className, ...children) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  element.append(...children.filter((child) => child !== null && child !== undefined));
  return element;
}

function row(cellTag, cells) {
  return el("tr", null, ...cells.map((cell) => el(cellTag, null, cell)));
}

function ordinal(n) {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] ?? "th";
  return `${n}${suffix}`;
}

const seconds = (s) => (s < 1 ? `${(s * 1000).toFixed(1)} ms` : `${s.toFixed(2)} s`);
const clock = (epoch) => new Date(epoch * 1000).toLocaleTimeString();

// The pool as a table: a row per target, a column per SOC any worker serves; past a few SOCs (a
// cpu worker serves a dozen) one column counts them, each SOC's workers in its title.
const SOC_COLUMNS = 4;

function socCount(counts) {
  const names = Object.keys(counts).sort();
  const cell = el("span", null, names.length ? `${names.length} SOCs` : "–");
  cell.title = names.map((soc) => `${soc}: ${counts[soc]} worker${counts[soc] === 1 ? "" : "s"}`).join("\n");
  return cell;
}

export function drawPool(table, targets) {
  const socs = [...new Set(targets.flatMap((target) => Object.keys(target.socs)))].sort();
  const columns = socs.length <= SOC_COLUMNS;
  const head = row("th", ["target", "workers", ...(columns ? socs : ["SOCs"]), "queued", "oldest queued"]);
  const body = targets.map((target) => {
    const bySoc = columns ? socs.map((soc) => String(target.socs[soc] ?? "–")) : [socCount(target.socs)];
    const tr = row("td", [target.name, String(target.workers), ...bySoc,
      String(target.queued), target.oldest_queued_s == null ? "–" : seconds(target.oldest_queued_s)]);
    tr.title = target.description;
    tr.classList.toggle("idle", target.workers === 0);
    return tr;
  });
  table.replaceChildren(el("thead", null, head), el("tbody", null, ...body));
}

// For each cache the recent jobs report (frontend, build): the share of them that hit it.
export function drawCacheRates(container, jobs) {
  const counts = {};
  for (const job of jobs) {
    for (const [cache, outcome] of Object.entries(job.cache ?? {})) {
      counts[cache] ??= { hits: 0, total: 0 };
      counts[cache].total += 1;
      counts[cache].hits += outcome === "hit" ? 1 : 0;
    }
  }
  const rates = Object.entries(counts).map(([cache, { hits, total }]) => {
    const bar = el("div", "bar");
    bar.style.width = `${(100 * hits) / total}%`;
    return el("div", "rate", el("span", "label", cache), el("div", "track", bar),
      el("span", "value", `${Math.round((100 * hits) / total)}% (${hits} of ${total})`));
  });
  container.replaceChildren(...(rates.length ? rates : [el("p", "muted", "no finished job reports its caches yet")]));
}

function statusText(job) {
  if (job.status === JobStatus.QUEUED && job.queue_position) {
    return `queued: ${ordinal(job.queue_position)} of ${job.queue_depth}`;
  }
  if (job.status === JobStatus.STARTED) return `running on ${job.worker ?? "a worker"}`;
  return job.status.replace("_", " ");
}

function took(job) {
  if (job.timings?.total !== undefined) return seconds(job.timings.total);
  if (job.ended_at && job.started_at) return seconds(job.ended_at - job.started_at);
  return job.started_at ? `${seconds(Date.now() / 1000 - job.started_at)}…` : "";
}

const targetText = (job) => (job.soc ? `${job.target} (${job.soc})` : job.target);
const cacheText = (job) => Object.entries(job.cache ?? {}).map(([cache, outcome]) => `${cache} ${outcome}`).join(", ");

function jobLink(id) {
  const link = el("a", null, id.slice(0, 12));
  link.href = `#job=${id}`;
  return link;
}

// A summary's error (its kind and first line, whole in the cell's title) and its count of warnings.
function problems(job) {
  const error = job.error && el("span", "error", `${job.error.kind}: ${job.error.headline}`);
  if (error) error.title = job.error.headline;
  const count = job.warning_count ?? 0;
  const warnings = count ? el("span", "warnings", `${count} warning${count === 1 ? "" : "s"}`) : null;
  return el("span", "problems", error, warnings);
}

// `everyTenant`: an operator's list, each job's kernel with its tenant.
export function drawJobs(tbody, jobs, selectedId, onSelect, everyTenant = false) {
  const rows = jobs.map((job) => {
    const kernel = everyTenant ? el("span", null, job.kernel, " ", el("span", "tenant", job.tenant)) : job.kernel;
    const tr = row("td", [el("span", `status ${job.status}`, statusText(job)), kernel,
      targetText(job), String(job.core_num), clock(job.created_at), took(job),
      cacheText(job), problems(job), jobLink(job.id)]);
    tr.dataset.job = job.id;
    tr.classList.toggle("selected", job.id === selectedId);
    tr.addEventListener("click", () => onSelect(job.id));
    return tr;
  });
  if (!jobs.length) {
    const empty = el("td", "muted", "no jobs yet: launch a kernel (ascrun.Client)");
    empty.colSpan = 9;
    rows.push(el("tr", null, empty));
  }
  tbody.replaceChildren(...rows);
}

// The timing breakdown: a bar per stage, scaled to the longest; "total" is the caption.
export function drawTimings(chart, timings) {
  const stages = Object.entries(timings).filter(([stage]) => stage !== "total");
  const longest = Math.max(...stages.map(([, s]) => s), 1e-9);
  const bars = stages.map(([stage, s]) => {
    const bar = el("div", "bar");
    bar.style.width = `${Math.max((100 * s) / longest, 0.5)}%`;
    const line = el("div", "stage", el("span", "label", stage), el("div", "track", bar),
      el("span", "value", seconds(s)));
    line.dataset.stage = stage;
    return line;
  });
  const caption = timings.total === undefined ? null : el("p", "muted", `total ${seconds(timings.total)}`);
  chart.replaceChildren(...(bars.length ? bars : [el("p", "muted", "no timings yet")]), ...(caption ? [caption] : []));
}

export function drawOutputs(table, outputs) {
  const rows = Object.entries(outputs).map(([name, output]) =>
    row("td", [name, output.dtype, `[${output.shape.join(", ")}]`, output.blob ? "blob" : "inline"]));
  if (!rows.length) rows.push(row("td", ["none", "", "", ""]));
  table.replaceChildren(el("thead", null, row("th", ["output", "dtype", "shape", "returned"])),
    el("tbody", null, ...rows));
}

export function drawFacts(list, job) {
  const facts = [["status", statusText(job)], ["kernel", job.kernel], ["target", targetText(job)],
    ["cores", String(job.core_num)], ["bounds", job.bounds], ...(job.hazards ? [["hazards", job.hazards]] : []),
    ["submitted", clock(job.created_at)],
    ...Object.entries(job.stages ?? {}).map(([stage, done]) => [stage, `${done.worker}, ${seconds(done.seconds)}`]),
    ["cache", cacheText(job) || "–"], ["IR hash", job.ir_hash ?? "–"]];
  list.replaceChildren(...facts.flatMap(([term, value]) => [el("dt", null, term), el("dd", null, value)]));
}

const CITATION = /([^\s:'"()]+\.py):(\d+)/g;  // a line of the kernel's Python, as a message cites it

// A failed job's error as printed (preformatted), beside the kernel's Python functions it cites
// (error.python), numbered from their first line, each cited line marked.
export function drawError(message, python, error) {
  message.textContent = `${error.kind}: ${error.message}`;
  const cited = new Set([...error.message.matchAll(CITATION)].map(([, file, line]) => `${file}:${Number(line)}`));
  python.replaceChildren(...(error.python ?? []).map((fn) => {
    const lines = fn.source.replace(/\n$/, "").split("\n").map((text, i) => {
      const number = fn.lineno + i;
      const line = el("span", "line", el("span", "lineno", String(number)), highlight(text, "python"), "\n");
      line.dataset.line = String(number);
      line.classList.toggle("cited", cited.has(`${fn.filename}:${number}`));
      return line;
    });
    return el("figure", "python", el("figcaption", null, `${fn.filename}:${fn.lineno} · ${fn.name}`),
      el("pre", "code", ...lines));
  }));
}

const bytes = (n) => (n ? `${(n / 2 ** 30).toFixed(n % 2 ** 30 ? 1 : 0)} GiB` : "unlimited");

// A worker's SOCs: named when few; a cpu worker serves every SOC it models (a dozen), counted, the
// names in the title.
const socsOf = (socs) => (!socs?.length ? "any SOC" : socs.length <= 3 ? socs.join(", ") : `${socs.length} SOCs`);

// What a worker serves: per target its SOCs and stages, and its jails (their stages and limits).
function serves(worker) {
  const said = Object.entries(worker.serves);
  const targets = el("span", null, said.map(([target, { socs, stages }]) =>
    `${target} (${socsOf(socs)}; ${(stages ?? []).join(" + ")})`).join("; "));
  targets.title = said.map(([target, { socs }]) => `${target}: ${socs?.length ? socs.join(", ") : "any SOC"}`)
    .join("\n");
  const jails = said.map(([, { jails }]) => jails).filter(Boolean).map((jails) =>
    `${jails.stages.join(", ")}: memory ${bytes(jails.memory)}, cpu ${jails.cpu} s, ${jails.files} files`);
  return [targets, [...new Set(jails)].join("; ") || "–"];
}

// The operator's panel: every live worker, and every tenant of the tenants file (v1/pool).
export function drawOperator(workersTable, tenantsTable, { workers, tenants }) {
  const workerRows = workers.map((worker) => {
    const running = worker.running.length ? el("span", null, ...worker.running.map(jobLink)) : "idle";
    const ago = Math.max(0, Date.now() / 1000 - worker.last_beat);
    const tr = row("td", [worker.name, ...serves(worker), running, `${ago.toFixed(1)} s ago`]);
    tr.dataset.worker = worker.name;
    return tr;
  });
  workersTable.replaceChildren(el("thead", null, row("th", ["worker", "serves (SOCs; stages)", "jails", "runs now",
    "last heartbeat"])), el("tbody", null, ...workerRows));
  const tenantRows = tenants.map((tenant) => {
    const refusals = Object.entries(tenant.refusals).map(([reason, n]) => `${reason}: ${n}`).join(", ");
    const tr = row("td", [tenant.name, ...["finished", "failed", "timed_out"].map((s) => String(tenant.jobs[s] ?? 0)),
      String(tenant.active), refusals || "–"]);
    tr.dataset.tenant = tenant.name;
    return tr;
  });
  tenantsTable.replaceChildren(el("thead", null, row("th", ["tenant", "finished", "failed", "timed out",
    "queued or running", "refused (by reason)"])), el("tbody", null, ...tenantRows));
}
