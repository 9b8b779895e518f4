/**
 * The dashboard's browser script (plain JavaScript, no build step): the bearer token (asked for
 * once, kept in the tab's session storage), one live stream read with `fetch()` so it can carry
 * the token, the views, and the dead-letter actions. Internal.
 *
 * @module
 */

/** The page's module script. */
export const script: string = String.raw`
const base = document.querySelector('meta[name="fw-base"]').content;
const api = base + "/api";
const $ = (sel) => document.querySelector(sel);
const state = { token: sessionStorage.getItem("fw.dashboard.token") || "", deadTotal: -1, topic: "", cursor: null, pages: [], snapshot: null };

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c === undefined || c === null ? "" : String(c)));
  return e;
}
const num = (v, digits) => v === undefined || v === null ? "" : Number(v).toFixed(digits === undefined ? 0 : digits);
const td = (v, cls) => el("td", cls ? { class: cls } : {}, v);
function fill(table, rows) { const body = table.tBodies[0]; body.replaceChildren(...rows); }

async function call(path, init) {
  const headers = Object.assign({}, (init && init.headers) || {});
  if (state.token) headers.authorization = "Bearer " + state.token;
  const res = await fetch(api + path, Object.assign({}, init || {}, { headers }));
  if (res.status === 401) { showLogin("Sign in to continue."); throw new Error("unauthorized"); }
  if (!res.ok) { const body = await res.json().catch(() => ({})); throw new Error(body.message || res.statusText); }
  return res;
}

function showLogin(message) {
  $("#login").hidden = false;
  $("#login-error").textContent = message || "";
  for (const v of document.querySelectorAll(".view")) v.hidden = true;
}
$("#login").addEventListener("submit", (e) => {
  e.preventDefault();
  state.token = $("#token").value.trim();
  sessionStorage.setItem("fw.dashboard.token", state.token);
  $("#login").hidden = true;
  show();
  connect();
});

function show() {
  const view = (location.hash || "#overview").slice(1);
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + view;
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === view);
  if (view === "dead-letters") loadDead();
}
addEventListener("hashchange", show);

let streamAbort = null;
async function connect() {
  if (streamAbort) streamAbort.abort();
  const ctl = streamAbort = new AbortController();
  try {
    const res = await call("/stream", { signal: ctl.signal, headers: { accept: "text/event-stream" } });
    $("#live").textContent = "live"; $("#live").classList.remove("off");
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
        let event = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (data) onEvent(event, JSON.parse(JSON.parse(data))); // a JSON text sent as a string message
      }
    }
  } catch (e) {
    if (ctl.signal.aborted || e.message === "unauthorized") return;
  }
  $("#live").textContent = "reconnecting"; $("#live").classList.add("off");
  if (!ctl.signal.aborted) setTimeout(connect, 2000);
}

function onEvent(event, data) {
  if (event === "snapshot") {
    state.snapshot = data;
    renderOverview(data.overview); renderEventServer(data.eventServer);
    renderSchedules(data.schedules); renderTraces(data.traces);
    const dead = data.overview.deadLetters;
    $("#dead-count").textContent = dead.total > 0 ? String(dead.total) : "";
    renderTopics(dead.byTopic);
    if (dead.total !== state.deadTotal) { state.deadTotal = dead.total; if (location.hash === "#dead-letters") loadDead(); }
  } else if (event === "queues") renderQueues(data.transports);
}

function renderOverview(o) {
  $("#window").textContent = "(last " + o.windowSeconds + " s)";
  fill($("#routes"), o.routes.map((r) => el("tr", {}, td(r.method), td(r.route), td(num(r.rate, 2), "num"), td(num(r.p50, 2), "num"), td(num(r.p99, 2), "num"), td(num(r.errorRate * 100, 1) + " %", r.errorRate > 0 ? "num bad" : "num"), td(r.total, "num"))));
  fill($("#topics"), o.topics.map((t) => el("tr", {}, td(t.topic), td(num(t.rate, 2), "num"), td(t.total, "num"), td(t.errors, t.errors ? "num bad" : "num"))));
  fill($("#handlers"), o.handlers.map((h) => el("tr", { "data-topic": h.topic, "data-group": h.group }, td(h.name), td(h.topic), td(h.group), td(h.transport), td(h.inFlight, "num"), td(h.queued, "num"), td(h.success, "num success"), td(h.failure, h.failure ? "num bad failure" : "num failure"), td(h.retry, "num retry"), td(h.deadLettered, "num dead"))));
}

function renderQueues(transports) {
  const out = [];
  for (const t of transports) {
    out.push(el("h2", {}, t.transport + " (" + t.kind + ")"));
    if (t.error) out.push(el("p", { class: "error" }, t.error));
    if (!t.inspectable) { out.push(el("p", { class: "note" }, "This transport cannot tell its backlog.")); continue; }
    const rows = t.queues.map((q) => el("tr", {}, td(q.topic), td(q.group), td(q.waiting, "num"), td(q.inFlight, "num"), td(q.retrying, "num"), td(q.oldestAgeMs === undefined ? "" : num(q.oldestAgeMs / 1000, 1) + " s", "num"), td(Object.entries(q.details || {}).map(([k, v]) => k + " " + v).join(", "))));
    const table = el("table", { class: "queues" }, el("thead", {}, el("tr", {}, ...["Topic", "Group", "waiting", "in flight", "retrying", "oldest", "details"].map((h) => el("th", {}, h)))), el("tbody", {}, ...rows));
    out.push(table);
    const note = t.queues.find((q) => q.note);
    if (note) out.push(el("p", { class: "note" }, note.note));
  }
  $("#queues").replaceChildren(...out);
}

function renderTopics(byTopic) {
  const select = $("#dl-topic");
  const keep = select.value;
  select.replaceChildren(el("option", { value: "" }, "all topics"), ...Object.entries(byTopic).map(([t, n]) => el("option", { value: t }, t + " (" + n + ")")));
  select.value = keep in byTopic || keep === "" ? keep : "";
}

async function loadDead() {
  const q = new URLSearchParams({ limit: "50" });
  if (state.topic) q.set("topic", state.topic);
  if (state.cursor) q.set("cursor", state.cursor);
  let page;
  try { page = await (await call("/dead-letters?" + q)).json(); } catch (e) { $("#dl-status").textContent = e.message; return; }
  state.next = page.next;
  fill($("#dead-letters"), page.items.map((d) => el("tr", { "data-id": d.id },
    td(el("input", { type: "checkbox", class: "pick", value: d.id })), td(el("code", {}, d.id)), td(d.topic), td(d.transport), td(d.attempts, "num"), td(d.error, "bad"), td(new Date(d.deadAt).toLocaleString()),
    td(el("details", {}, el("summary", {}, "payload"), el("pre", {}, JSON.stringify(d.payload, null, 2)), el("pre", {}, JSON.stringify(d.attributes, null, 2)))))));
  $("#dl-empty").hidden = page.items.length > 0;
  $("#dl-total").textContent = page.total + " in all";
  $("#dl-next").disabled = !page.next;
  $("#dl-all").checked = false;
}
const picked = () => [...document.querySelectorAll("#dead-letters .pick:checked")].map((c) => c.value);
$("#dl-topic").addEventListener("change", (e) => { state.topic = e.target.value; state.cursor = null; loadDead(); });
$("#dl-all").addEventListener("change", (e) => { for (const c of document.querySelectorAll("#dead-letters .pick")) c.checked = e.target.checked; });
$("#dl-next").addEventListener("click", () => { if (state.next) { state.cursor = state.next; loadDead(); } });
$("#dl-first").addEventListener("click", () => { state.cursor = null; loadDead(); });

async function act(action, selection) {
  try {
    const res = await call("/dead-letters/" + action, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(selection) });
    const { moved } = await res.json();
    $("#dl-status").textContent = (action === "redrive" ? "Redriven: " : "Discarded: ") + moved;
  } catch (e) { $("#dl-status").textContent = e.message; }
  state.cursor = null;
  loadDead();
}
$("#dl-redrive").addEventListener("click", () => { const ids = picked(); if (ids.length) act("redrive", { ids }); });
$("#dl-redrive-topic").addEventListener("click", () => { if (state.topic) act("redrive", { topic: state.topic }); else $("#dl-status").textContent = "Choose a topic first."; });
$("#dl-discard").addEventListener("click", () => {
  const ids = picked();
  if (!ids.length) return;
  $("#confirm-text").textContent = "Discard " + ids.length + " dead letter(s)? They cannot be brought back.";
  const dialog = $("#confirm");
  dialog.onclose = () => { if (dialog.returnValue === "ok") act("discard", { ids }); };
  dialog.returnValue = "";
  dialog.showModal();
});

function table(headers, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", {}, h)))), el("tbody", {}, ...rows));
}

function renderEventServer(es) {
  if (!es.mounted) { $("#event-server").replaceChildren(el("p", { class: "empty" }, "No Event Server is mounted in this application.")); return; }
  const subs = Object.entries(es.subscriptions || {}).map(([t, n]) => el("tr", {}, td(t), td(n, "num")));
  $("#event-server").replaceChildren(el("p", {}, "Connections: ", el("strong", { id: "es-connections" }, es.connections), " · slow-consumer closes: ", el("strong", {}, es.slowConsumerCloses === undefined ? "n/a" : es.slowConsumerCloses)), table(["Topic", "Subscriptions"], subs));
}

function renderSchedules(s) {
  if (!s.available) { $("#schedules").replaceChildren(el("p", { class: "empty" }, "This application has no schedules.")); return; }
  $("#schedules").replaceChildren(table(["Schedule", "Every", "Next run", "Last run", "Outcome", "Attempts", "Duration", "Running"], s.items.map((x) => el("tr", { "data-schedule": x.name }, td(x.name), td(x.every), td(x.next ? new Date(x.next).toLocaleString() : "", "next"), td(x.lastRun ? new Date(x.lastRun).toLocaleString() : "never", "last-run"), td((x.outcome || "") + (x.error ? ": " + x.error : ""), x.outcome === "failed" ? "outcome bad" : "outcome"), td(x.attempts, "num"), td(x.durationMs === undefined ? "" : num(x.durationMs) + " ms", "num"), td(x.running, "num")))));
}

let openTrace = null;
function renderTraces(t) {
  if (!t.available) { $("#traces").replaceChildren(el("p", { class: "empty" }, "No traces: add telemetry() before dashboard() in use() to keep the last traces here.")); return; }
  $("#traces").replaceChildren(table(["Trace", "Start", "Duration", "Spans"], t.items.map((x) => el("tr", {}, td(el("a", { href: "#traces", onclick: () => loadTrace(x.traceId) }, x.name), x.error ? "bad" : ""), td(new Date(x.start).toLocaleTimeString()), td(num(x.durationMs, 1) + " ms", "num"), td(x.spans, "num")))));
  if (openTrace) loadTrace(openTrace);
}

// a log line as "level message key=value ...", nested fields flattened, ids the span shows left out
const SAME = new Set(["traceId", "topic", "messageId", "handler"]);
function logLine(l) {
  const parts = [l.level, l.message];
  const add = (fields) => { for (const [k, v] of Object.entries(fields || {})) { if (SAME.has(k)) continue; if (v && typeof v === "object" && !Array.isArray(v)) add(v); else parts.push(k + "=" + (typeof v === "string" ? v : JSON.stringify(v))); } };
  add(l.fields);
  return parts.join(" ");
}

async function loadTrace(id) {
  openTrace = id;
  let spans;
  try { spans = (await (await call("/traces/" + encodeURIComponent(id))).json()).spans; } catch (e) { $("#waterfall").textContent = e.message; return; }
  const total = Math.max(1, ...spans.map((s) => s.offsetMs + s.durationMs));
  const rows = [el("h2", {}, "Trace " + id)];
  for (const s of spans) {
    const bar = el("div", { class: s.error ? "bar failed" : "bar" });
    bar.style.left = (100 * s.offsetMs / total) + "%"; bar.style.width = (100 * s.durationMs / total) + "%";
    const track = el("div", { class: "bar-track" });
    if (s.waitMs !== undefined) {
      const wait = el("div", { class: "bar wait", title: "waited " + num(s.waitMs, 1) + " ms" });
      wait.style.left = (100 * (s.offsetMs - s.waitMs) / total) + "%"; wait.style.width = (100 * s.waitMs / total) + "%";
      track.append(wait);
    }
    track.append(bar);
    const attempt = s.attributes["fw.events.attempt"];
    const label = s.name + (attempt !== undefined ? " #" + attempt : "") + (s.error ? " (" + s.error + ")" : "");
    const name = el("div", { class: "bar-name", title: JSON.stringify(s.attributes), "data-kind": s.kind }, "\u00a0".repeat(s.depth * 3) + label);
    const time = num(s.durationMs, 1) + " ms" + (s.waitMs !== undefined ? " (waited " + num(s.waitMs, 1) + " ms)" : "");
    rows.push(el("div", { class: "bar-row" }, name, track, el("span", { class: "num" }, time)));
    if (s.logs.length) rows.push(el("pre", { class: "logs" }, s.logs.map(logLine).join("\n")));
  }
  $("#waterfall").replaceChildren(...rows);
}

show();
connect();
`;
