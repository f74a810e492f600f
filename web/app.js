// The status page of `blurfarm serve`: the queue live over the event stream (read with
// fetch, so that a token can go in a header), the workers, the last output's thumbnail, and
// buttons that steer a job. No library: the browser's own APIs.
"use strict";

const jobs = new Map();        // id -> job, as the API shows it
const openOutputs = new Set(); // ids of jobs whose outputs are shown
const seenAt = new Map();      // id -> the event id of the last job event that carried it
let token = sessionStorage.getItem("blurfarm-token") || "";
let lastEventId = null;
let lastThumbnail = 0;
let thumbnailTimer = null;

const $ = (id) => document.getElementById(id);

function headers(extra = {}) {
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

async function api(path, body) {
  const init = body === undefined
    ? { headers: headers() }
    : { method: "POST", headers: headers({ "Content-Type": "application/json" }), body: JSON.stringify(body) };
  const response = await fetch(`/api/v1/${path}`, init);
  if (response.status === 401 || response.status === 403) askForToken();
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.error || `${response.status}`);
  return answer;
}

function askForToken() {
  $("token-form").hidden = false;
  setConnection("lost", "needs the token");
}

function setConnection(state, text) {
  const pill = $("connection");
  pill.dataset.state = state;
  pill.textContent = text;
}

// MARK: The event stream

async function listen() {
  while (true) {
    try {
      const query = lastEventId === null ? "" : `?after=${lastEventId}`;
      const response = await fetch(`/api/v1/events${query}`, { headers: headers() });
      if (response.status === 401 || response.status === 403) { askForToken(); return; }
      if (!response.ok || !response.body) throw new Error(`${response.status}`);
      setConnection("live", "live");
      if (lastEventId === null) await refresh();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          handle(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
    } catch (error) {
      // The server went away (a restart): try again in a moment.
    }
    setConnection("lost", "reconnecting…");
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
}

function handle(text) {
  let kind = "message", data = "", id = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("event: ")) kind = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
    else if (line.startsWith("id: ")) id = Number(line.slice(4));
  }
  if (id !== null) lastEventId = id;
  if (!data) return;
  const value = JSON.parse(data);
  if ((kind === "job" || kind === "output") && id !== null) seenAt.set(value.id, id);
  if (kind === "job" || kind === "output") update(value);
  else if (kind === "progress") update(value.job);
  else if (kind === "workers") renderWorkers(value);
  if (kind === "output" && value.outputsWritten > 0) refreshThumbnail();
}

async function refresh() {
  const [list, workers] = await Promise.all([api("jobs"), api("workers")]);
  jobs.clear();
  for (const job of list.jobs) jobs.set(job.id, job);
  render();
  renderWorkers(workers.workers);
  refreshThumbnail();
}

function update(job) {
  jobs.set(job.id, job);
  render();
  if (openOutputs.has(job.id)) loadOutputs(job.id);
}

// MARK: Rendering

function render() {
  const list = $("jobs");
  const ordered = [...jobs.values()].sort((a, b) => (b.priority - a.priority) || (a.id - b.id));
  $("empty").hidden = ordered.length > 0;
  const existing = new Map([...list.children].map((item) => [Number(item.dataset.id), item]));
  ordered.forEach((job, index) => {
    let item = existing.get(job.id);
    if (!item) item = makeItem(job.id);
    fill(item, job);
    if (list.children[index] !== item) list.insertBefore(item, list.children[index] || null);
  });
  for (const [id, item] of existing) if (!jobs.has(id)) item.remove();
  const counts = {};
  for (const job of ordered) counts[job.state] = (counts[job.state] || 0) + 1;
  $("summary").textContent = Object.entries(counts).map(([state, n]) => `${n} ${state}`).join(" · ");
}

function makeItem(id) {
  const item = $("job-template").content.firstElementChild.cloneNode(true);
  item.dataset.id = id;
  for (const button of item.querySelectorAll("button")) {
    button.addEventListener("click", () => act(id, button.dataset.action, item));
  }
  const priority = item.querySelector(".priority input");
  priority.addEventListener("change", () => act(id, "priority", item, Number(priority.value)));
  return item;
}

function fill(item, job) {
  item.dataset.state = job.state;
  const state = item.querySelector(".state");
  state.dataset.state = job.state;
  state.textContent = job.state;
  item.querySelector(".name").textContent = job.name;
  item.querySelector(".id").textContent = `#${job.id}`;
  const priority = item.querySelector(".priority input");
  if (document.activeElement !== priority) priority.value = job.priority;
  const p = job.progress;
  const percent = Math.round(p.fraction * 100);
  const bar = item.querySelector(".progress");
  bar.setAttribute("aria-valuenow", String(percent));
  bar.querySelector(".fill").style.width = `${percent}%`;
  let counts = `${p.outputsDone} / ${p.outputsTotal} outputs (${percent} %)`;
  if (job.outputsFailed > 0) counts += ` · ${job.outputsFailed} failed`;
  if (job.outputsUpToDate > 0) counts += ` · ${job.outputsUpToDate} up to date`;
  item.querySelector(".counts").textContent = counts;
  item.querySelector(".speed").textContent =
    p.tilesTotal > 0 ? `${p.tilesDone} / ${p.tilesTotal} tiles` + (p.megapixelsPerSecond ? ` · ${p.megapixelsPerSecond.toFixed(1)} MP/s` : "") : "";
  item.querySelector(".eta").textContent =
    p.etaSeconds !== undefined && !["completed", "failed", "cancelled"].includes(job.state) ? `ETA ${duration(p.etaSeconds)}` : "";
  const error = item.querySelector(".error");
  error.hidden = !job.error;
  error.textContent = job.error || "";
  const can = {
    pause: job.state === "queued" || job.state === "active",
    resume: job.state === "paused",
    cancel: ["queued", "active", "paused"].includes(job.state),
    retry: job.state === "failed" || job.state === "cancelled",
  };
  for (const [action, allowed] of Object.entries(can)) item.querySelector(`[data-action="${action}"]`).hidden = !allowed;
}

function duration(seconds) {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

async function act(id, action, item, value) {
  if (action === "outputs") {
    const list = item.querySelector(".outputs");
    list.hidden = !list.hidden;
    if (list.hidden) openOutputs.delete(id); else { openOutputs.add(id); loadOutputs(id); }
    return;
  }
  try {
    const sent = lastEventId;
    const job = action === "priority" ? await api(`jobs/${id}/priority`, { priority: value }) : await api(`jobs/${id}/${action}`, {});
    // The stream may have told a later state of the job before this answer arrived.
    if ((seenAt.get(id) ?? -1) <= (sent ?? -1)) update(job);
  } catch (error) {
    const line = item.querySelector(".error");
    line.hidden = false;
    line.textContent = error.message;
  }
}

async function loadOutputs(id) {
  const item = document.querySelector(`.job[data-id="${id}"]`);
  if (!item) return;
  const { outputs } = await api(`jobs/${id}/outputs`);
  const manifest = jobs.get(id)?.manifest || "";
  const folder = manifest.slice(0, manifest.lastIndexOf("/") + 1);
  const list = item.querySelector(".outputs");
  list.replaceChildren(...(outputs.length ? outputs : [null]).map((output) => {
    const line = document.createElement("li");
    if (!output) { line.textContent = "no output started yet"; return line; }
    const state = document.createElement("span");
    state.dataset.state = output.state;
    state.textContent = output.state;
    const path = document.createElement("span");
    path.className = "path";
    path.textContent = shown(output.output, folder) + (output.state === "rendering" ? ` (${output.tilesDone}/${output.tiles} tiles)` : "");
    path.title = output.output;
    line.append(state, path);
    if (output.error) {
      const why = document.createElement("span");
      why.className = "why";
      why.textContent = (output.errorKind ? `${output.errorKind}: ` : "") + output.error;
      line.append(why);
    }
    return line;
  }));
}

// `path` relative to the job's folder when it is below it.
function shown(path, folder) {
  return folder && path.startsWith(folder) ? path.slice(folder.length) : path;
}

function renderWorkers(workers) {
  const list = $("workers");
  if (!workers.length) {
    const none = document.createElement("li");
    none.className = "none";
    none.textContent = "none running (they start with the first job)";
    list.replaceChildren(none);
    return;
  }
  list.replaceChildren(...workers.map((worker) => {
    const line = document.createElement("li");
    line.dataset.state = worker.state;
    const dot = document.createElement("span");
    dot.className = "dot";
    const name = document.createElement("span");
    name.textContent = `pid ${worker.pid} · ${worker.state}`;
    const done = document.createElement("span");
    done.textContent = `${worker.tilesDone} tiles` + (worker.restarts ? ` · ${worker.restarts} restarts` : "");
    const what = document.createElement("span");
    what.className = "what";
    what.textContent = worker.tile ? `tile ${worker.tile}` : "";
    line.append(dot, name, done, what);
    return line;
  }));
}

// At most one request every 2 s; a refresh asked for sooner is made when the 2 s are up (the
// last outputs of a job often come within 2 s of the one before).
async function refreshThumbnail() {
  const wait = lastThumbnail + 2000 - Date.now();
  if (wait > 0) {
    if (thumbnailTimer === null) {
      thumbnailTimer = setTimeout(() => {
        thumbnailTimer = null;
        refreshThumbnail();
      }, wait);
    }
    return;
  }
  lastThumbnail = Date.now();
  const response = await fetch("/api/v1/thumbnail", { headers: headers() });
  if (!response.ok) return;
  const image = $("thumbnail");
  const old = image.src;
  image.src = URL.createObjectURL(await response.blob());
  if (old) URL.revokeObjectURL(old);
  image.hidden = false;
  image.alt = "the last output written";
  $("last-caption").textContent = "the last output written";
}

$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  token = $("token").value;
  sessionStorage.setItem("blurfarm-token", token);
  $("token-form").hidden = true;
  lastEventId = null;
  listen();
});

// The workers' tiles and states change with every tile: read them every two seconds.
setInterval(async () => {
  if ($("connection").dataset.state !== "live") return;
  try { renderWorkers((await api("workers")).workers); } catch (error) { /* shown by the stream */ }
}, 2000);

listen();
