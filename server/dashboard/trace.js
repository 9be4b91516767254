// A cpu job's modeled pipe timeline (GET /v1/jobs/{id}/trace: Chrome trace event JSON): for each
// core a group with a lane per pipe that ran something, each instruction a bar from its start
// cycle, as wide as its cycles. A lane is one SVG path in cycle units (viewBox 0..span), so
// 8 cores x 2048 instructions are a few dozen elements; the tooltip finds the bar under the
// pointer by binary search. Names are set as text, never as markup.
import { el } from "./views.js";

const SVG = "http://www.w3.org/2000/svg";
const PIPES = ["S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"];  // lane order, top to bottom
const COLORS = { S: "#8a94a3", V: "#1f8f4e", M: "#8250df", MTE1: "#0e8a8a", MTE2: "#2f6fde", MTE3: "#d9822b",
  FIX: "#9a6324" };
const LANE_HEIGHT = 10;  // in the lane's own units: a bar fills it but for a 1-unit margin
const TIP_PX = 3;  // how near the pointer a bar counts as under it

function svg(tag, attributes) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

const number = (n) => Math.round(n).toLocaleString("en-US");
const order = (pipe) => (PIPES.includes(pipe) ? PIPES.indexOf(pipe) : PIPES.length);

// The trace's cores in pid order: {name, lanes: [{pipe, bars: [{name, cycle, cycles}] by cycle}], notes}.
export function readTrace(trace) {
  const clockGhz = Number(trace.otherData?.clock_ghz) || 1;
  const cores = new Map();
  const threads = new Map();
  const core = (pid) => {
    if (!cores.has(pid)) cores.set(pid, { pid, name: `process ${pid}`, lanes: new Map(), notes: [] });
    return cores.get(pid);
  };
  for (const event of trace.traceEvents ?? []) {
    if (event.ph === "M" && event.name === "process_name") {
      core(event.pid).name = String(event.args?.name ?? event.pid);
    } else if (event.ph === "M" && event.name === "thread_name") {
      threads.set(`${event.pid}/${event.tid}`, String(event.args?.name ?? event.tid));
    } else if (event.ph === "X") {
      const lanes = core(event.pid).lanes;
      if (!lanes.has(event.tid)) lanes.set(event.tid, { tid: event.tid, cat: event.cat, bars: [] });
      const args = event.args ?? {};
      lanes.get(event.tid).bars.push({
        name: String(event.name),
        cycle: Number(args.cycle ?? event.ts * clockGhz * 1000),
        cycles: Number(args.cycles ?? event.dur * clockGhz * 1000),
      });
    } else if (event.ph === "i" || event.ph === "I") {
      core(event.pid).notes.push(String(event.name));
    }
  }
  return [...cores.values()].sort((a, b) => a.pid - b.pid).map((c) => ({
    name: c.name,
    notes: c.notes,
    lanes: [...c.lanes.values()].map((lane) => ({
      pipe: threads.get(`${c.pid}/${lane.tid}`) ?? String(lane.cat ?? `thread ${lane.tid}`),
      bars: lane.bars.sort((a, b) => a.cycle - b.cycle),
    })).sort((a, b) => order(a.pipe) - order(b.pipe) || a.pipe.localeCompare(b.pipe)),
  }));
}

// Round tick steps (1, 2 or 5 times a power of ten) for about `count` ticks over 0..span.
function ticks(span, count = 8) {
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const at = [];
  for (let t = 0; t <= span + 1e-9; t += step) at.push(t);
  return at;
}

function axis(span) {
  const ruler = svg("svg", { class: "axis", height: 18, width: "100%" });
  for (const t of ticks(span)) {
    const x = `${(100 * t) / span}%`;
    ruler.append(svg("line", { x1: x, x2: x, y1: 12, y2: 18 }));
    const label = svg("text", { x, y: 10, "text-anchor": t === 0 ? "start" : t / span > 0.97 ? "end" : "middle" });
    label.textContent = number(t);
    ruler.append(label);
  }
  return el("div", "lane", el("span", "pipe muted", "cycle"), ruler);
}

// The bar under the pointer, if any: bars are sorted by start; those of a pipe rarely overlap.
function barAt(bars, cycle, slack) {
  let lo = 0;
  let hi = bars.length;
  while (lo < hi) {  // the first bar starting after cycle + slack
    const mid = (lo + hi) >> 1;
    if (bars[mid].cycle <= cycle + slack) lo = mid + 1; else hi = mid;
  }
  for (let i = lo - 1; i >= 0 && i >= lo - 8; i -= 1) {
    if (bars[i].cycle + bars[i].cycles >= cycle - slack) return bars[i];
  }
  return null;
}

function figures(pipe, core) {
  const busy = core?.busy?.[pipe];
  const critical = core?.critical_path?.[pipe];
  const parts = [];
  if (busy !== undefined) parts.push(`busy ${number(busy)}`);
  if (critical !== undefined) parts.push(`critical ${number(critical)}`);
  return parts.join(" · ");
}

const colorOf = (pipe) => COLORS[pipe] ?? "#555";

function lane(pipe, bars, span, coreName, coreModel, tip) {
  const minimum = span / 1500;  // a bar stays visible however short
  // two paths, every other bar in the second (paler): back-to-back instructions stay told apart
  const d = [[], []];
  bars.forEach((bar, i) => {
    d[i % 2].push(`M${bar.cycle} 1h${Math.max(bar.cycles, minimum)}v${LANE_HEIGHT - 2}H${bar.cycle}z`);
  });
  const track = svg("svg", { class: "track", viewBox: `0 0 ${span} ${LANE_HEIGHT}`, preserveAspectRatio: "none",
    role: "img", "aria-label": `${coreName} ${pipe}: ${bars.length} instructions` });
  track.append(svg("path", { d: d[0].join(""), fill: colorOf(pipe) }),
    svg("path", { d: d[1].join(""), fill: colorOf(pipe), "fill-opacity": 0.6 }));
  const swatch = el("i", "swatch");
  swatch.style.background = colorOf(pipe);
  const label = el("span", "pipe", swatch, pipe, " ", el("small", "muted", figures(pipe, coreModel)));
  const row = el("div", "lane", label, track);
  row.dataset.pipe = pipe;
  track.addEventListener("mousemove", (event) => {
    const box = track.getBoundingClientRect();
    const perPx = span / box.width;
    const bar = barAt(bars, (event.clientX - box.left) * perPx, TIP_PX * perPx);
    if (!bar) {
      tip.hidden = true;
      return;
    }
    tip.replaceChildren(el("b", null, bar.name), el("br"),
      `${pipe} · ${coreName} · start cycle ${number(bar.cycle)} · ${number(bar.cycles)} cycles`);
    tip.style.left = `${event.clientX + 12}px`;
    tip.style.top = `${event.clientY + 14}px`;
    tip.hidden = false;
  });
  track.addEventListener("mouseleave", () => { tip.hidden = true; });
  return row;
}

function coreGroup(core, coreModel, span, tip) {
  const traced = core.lanes.reduce((n, l) => n + l.bars.length, 0);
  const count = coreModel?.instructions !== undefined && coreModel.instructions !== traced
    ? `${number(coreModel.instructions)} instructions, ${number(traced)} traced` : `${number(traced)} instructions`;
  const shown = new Set(core.lanes.map((l) => l.pipe));
  const modeled = new Set([...Object.keys(coreModel?.busy ?? {}), ...Object.keys(coreModel?.critical_path ?? {})]);
  const laneless = [...modeled].filter((p) => !shown.has(p)).map((p) => `${p}: ${figures(p, coreModel)}`);
  const head = el("div", "core-head", el("b", null, core.name),
    el("span", "muted", ` · ${coreModel ? `${number(coreModel.cycles)} cycles · ` : ""}${count}`),
    ...[...laneless, ...core.notes].map((note) => el("span", "muted", ` · ${note}`)));
  const lanes = core.lanes.map((l) => lane(l.pipe, l.bars, span, core.name, coreModel, tip));
  const group = el("div", "core", head, ...lanes);
  group.dataset.core = core.name;
  return group;
}

let downloadUrl = null;  // the trace drawn last, released when another is drawn

// The job's trace (parsed, and as the API sent it, for the download) and its record's `model`.
export function drawTrace(container, trace, text, job) {
  const cores = readTrace(trace);
  const model = job.model ?? {};
  const clockGhz = Number(model.clock_ghz ?? trace.otherData?.clock_ghz) || null;
  let span = Number(model.cycles) || 1;  // the axis: the job's cycles, or the last instruction's end
  for (const core of cores) {
    for (const { bars } of core.lanes) for (const bar of bars) span = Math.max(span, bar.cycle + bar.cycles);
  }

  if (downloadUrl) URL.revokeObjectURL(downloadUrl);
  downloadUrl = URL.createObjectURL(new Blob([text], { type: "application/json" }));
  const download = el("a", "download", "download trace JSON");
  download.href = downloadUrl;
  download.download = `${job.id}.trace.json`;
  download.title = "Chrome trace event format: open it in ui.perfetto.dev or chrome://tracing";

  const cycles = el("b", null, model.cycles === undefined ? "–" : number(model.cycles));
  cycles.id = "trace-cycles";
  cycles.dataset.cycles = String(model.cycles ?? "");
  const time = model.cycles !== undefined && clockGhz
    ? ` (${(model.cycles / clockGhz / 1000).toFixed(2)} µs at ${clockGhz} GHz)` : "";
  const unlisted = model.unlisted_cores ? `, ${model.unlisted_cores} more not traced` : "";
  const summary = el("p", "trace-summary", "modeled ", cycles,
    ` cycles${time} · ${cores.length} core${cores.length === 1 ? "" : "s"}${unlisted} · `, download,
    trace.otherData?.model ? el("span", "muted", ` · ${trace.otherData.model}`) : null);
  const legend = el("p", "muted", "a bar per instruction, from its start cycle, as wide as its cycles; busy: the ",
    "cycles a pipe ran, critical: its share of the chain of dependencies that sets the core's cycles");

  const tip = el("div", "trace-tip");
  tip.hidden = true;
  const groups = cores.map((core) => coreGroup(core, (model.cores ?? []).find((c) => c.core === core.name), span, tip));
  container.replaceChildren(summary, legend, axis(span),
    ...(groups.length ? groups : [el("p", "muted", "the trace holds no instructions")]), tip);
}

// A job without a trace, said plainly: `why` is the API's 404 (another target, a failed job...).
export function drawNoTrace(container, why) {
  if (downloadUrl) URL.revokeObjectURL(downloadUrl);
  downloadUrl = null;
  container.replaceChildren(el("p", "muted no-trace", why));
}
