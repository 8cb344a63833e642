// The admin API and the live event stream, with reconnection when Kagami goes away.
import { dispatch, listComplete, state } from "./store.js";
import { heldEdit } from "./held.js";

// The first read shows this many of the newest rows at once; older ones follow a page at a time.
// (Small enough that a page being read when the filter changes doesn't keep its answer waiting.)
const FIRST_PAGE = 1000;
const PAGE = 5000;

export async function getJSON(path, signal) {
  const response = await fetch(path, { headers: { Accept: "application/json" }, signal });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try { message = (await response.json()).error || message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  return response.json();
}

let pending = null; // the AbortController of the page being read; a newer read aborts it

/** A page of summaries, newest first, from `after` (the `next` of the page before). */
function readPage(limit, after, query) {
  pending = new AbortController();
  return getJSON(`api/flows?limit=${limit}&order=newest${after == null ? "" : `&after=${encodeURIComponent(after)}`}${query ? `&filter=${encodeURIComponent(query)}` : ""}`,
    pending.signal);
}

function abortReading() {
  reading++;
  pending?.abort();
  pending = null;
}

let source = null;
const releasedIds = new Set(); // held exchanges already let go, so a late read doesn't show them again
let retryDelay = 1000;
let syncing = null; // flows received live while the newest page is read
let reading = 0; // the read in progress: a newer one (another filter, a reconnect) makes it stop
let requested = ""; // the filter text of that read

/** Opens the event stream; on each (re)connect the list is read again so nothing is missed. */
export function connect() {
  if (source) source.close();
  dispatch({ type: "connection", connection: state.connection === "live" ? "connecting" : state.connection });
  source = new EventSource("api/events");
  source.addEventListener("hello", () => {
    retryDelay = 1000;
    dispatch({ type: "connection", connection: "live" });
    resync();
    syncHeld();
    getJSON("api/status").then((status) => dispatch({ type: "status", status })).catch(() => {});
  });
  source.addEventListener("flow", (event) => {
    const flow = JSON.parse(event.data);
    if (syncing) syncing.push(flow);
    else dispatch({ type: "flowArrived", flow });
  });
  // The event leaves the bodies out: the editor reads the whole held exchange.
  source.addEventListener("held", async (event) => {
    const announced = JSON.parse(event.data);
    let held = announced;
    try { held = await getJSON(`api/breakpoints/held/${announced.id}`); } catch { /* edit without the body; it is kept unless typed */ }
    if (!releasedIds.has(announced.id)) dispatch({ type: "heldArrived", held });
  });
  source.addEventListener("released", (event) => {
    const id = JSON.parse(event.data).id;
    releasedIds.add(id);
    dispatch({ type: "heldReleased", id });
  });
  // This page fell behind and lost events: read the session again.
  source.addEventListener("missed", () => resync());
  source.onerror = () => {
    source.close();
    source = null;
    dispatch({ type: "connection", connection: "disconnected" });
    setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 8000);
  };
}

/**
 * Reads the list again: the newest page of the session (or of the server's answer to `query`,
 * the filter box's text) is shown at once, then older pages are put in front in the background
 * until the list holds `state.list.bound` rows or the oldest exchange.
 */
async function resync(query = requested) {
  abortReading();
  const read = reading;
  requested = query;
  syncing = [];
  dispatch({ type: "loadStarted" });
  const started = performance.now();
  let page;
  try {
    page = await readPage(FIRST_PAGE, null, query);
  } catch (error) {
    if (read === reading) { syncing = null; dispatch({ type: "error", message: `Could not read the session: ${error.message}` }); }
    return;
  }
  if (read !== reading) return;
  const live = syncing;
  syncing = null;
  dispatch({ type: "flowsLoaded", flows: page.flows.reverse(), live, total: page.total, older: page.next, query, unapplied: page.unapplied,
    took: performance.now() - started });
  await readOlder(read);
}

/** Older pages in front of the list while it holds fewer rows than its bound. */
async function readOlder(read) {
  while (read === reading && state.list.older != null && state.flows.length < state.list.bound) {
    dispatch({ type: "olderReading", reading: true });
    let page;
    try {
      page = await readPage(Math.min(PAGE, state.list.bound - state.flows.length), state.list.older, state.list.query);
    } catch (error) {
      if (read === reading) dispatch({ type: "error", message: `Could not read older exchanges: ${error.message}` });
      break;
    }
    if (read !== reading) return;
    dispatch({ type: "olderLoaded", flows: page.flows.reverse(), older: page.next });
  }
  if (read === reading) dispatch({ type: "olderReading", reading: false });
}

/** "Load older": 10,000 more rows beyond the bound, asked for. */
export function loadOlder() {
  if (state.list.reading || state.list.older == null) return;
  dispatch({ type: "olderReading", reading: true, raise: 2 * PAGE });
  readOlder(reading);
}

let filterTimer = 0;
/**
 * The filter box's text: the rows held are filtered at once; when they are not every exchange
 * of the session, the server is asked too (after a pause in typing) and its answer replaces them.
 */
export function applyFilter(text) {
  clearTimeout(filterTimer);
  dispatch({ type: "filterChanged", text });
  const query = text.trim();
  if (!requested && !state.list.query && listComplete()) return; // every exchange is here: filtered in the page
  if (query === requested) return; // the rows held (or being read) are the server's answer to this text
  filterTimer = setTimeout(() => resync(query), 150);
}

export async function clearSession() {
  const response = await fetch("api/flows", { method: "DELETE" });
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  abortReading();
  requested = "";
  dispatch({ type: "cleared" });
}

export async function loadDetail(id) {
  try {
    const flow = await getJSON(`api/flows/${id}`);
    dispatch({ type: "detailLoaded", id, flow });
  } catch (error) {
    dispatch({ type: "detailLoaded", id, flow: null, error: error.message });
  }
}

/** The stored body bytes, decoded from gzip/deflate when Kagami can. */
export async function loadBody(id, part, { decode = true } = {}) {
  const response = await fetch(`api/flows/${id}/${part}/body${decode ? "?decode=1" : ""}`);
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  return {
    bytes: new Uint8Array(await response.arrayBuffer()),
    contentType: response.headers.get("Content-Type") || "",
    decoded: response.headers.get("X-Kagami-Decoded"),
    decodeError: response.headers.get("X-Kagami-Decode-Error"),
    truncated: response.headers.get("X-Kagami-Body-Truncated") === "true",
  };
}

/** Sends an HTTP Archive to be added to the session; its exchanges then arrive as live events. */
export async function importHAR(file) {
  const response = await fetch("api/import.har", { method: "POST", body: file, headers: { "Content-Type": "application/json" } });
  const answer = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
  if (!response.ok) throw new Error(answer.error || `${response.status} ${response.statusText}`);
  return answer;
}

/** Downloads the given exchanges as an HTTP Archive. */
export async function exportHAR(ids, filename) {
  try {
    const response = await fetch("api/export.har", { method: "POST", body: JSON.stringify({ ids }), headers: { "Content-Type": "application/json" } });
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      try { message = (await response.json()).error || message; } catch { /* not JSON */ }
      throw new Error(message);
    }
    const url = URL.createObjectURL(await response.blob());
    const link = Object.assign(document.createElement("a"), { href: url, download: filename });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  } catch (error) {
    dispatch({ type: "error", message: `Could not export: ${error.message}` });
  }
}

/** The rules document in force and the throttle presets, into the store. */
export async function loadRules() {
  dispatch({ type: "rulesLoading" });
  try {
    const [document, presets] = await Promise.all([getJSON("api/rules"), getJSON("api/throttle/presets")]);
    dispatch({ type: "rulesLoaded", document, presets: presets.presets });
  } catch (error) {
    dispatch({ type: "rulesLoaded", document: null, error: `Could not read the rules: ${error.message}` });
  }
}

/** Saves the draft; a refused document comes back with the field to fix. */
export async function saveRules() {
  dispatch({ type: "rulesSaving" });
  try {
    const response = await fetch("api/rules", { method: "PUT", body: JSON.stringify(state.rules.draft), headers: { "Content-Type": "application/json" } });
    const answer = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
    if (!response.ok) {
      dispatch({ type: "rulesSaveFailed", error: { error: answer.error || `${response.status}`, field: errorField(answer), message: answer.message || answer.error } });
      return;
    }
    // Custom presets may have changed with the document.
    const presets = await getJSON("api/throttle/presets").then((p) => p.presets, () => null);
    dispatch({ type: "rulesSaved", document: answer, presets });
  } catch (error) {
    dispatch({ type: "rulesSaveFailed", error: { error: `Could not save: ${error.message}`, field: "", message: error.message } });
  }
}

/**
 * The field an error names: `field` when the API gives it, else the one in the message
 * (`request body:3:5: breakpoints[0].location.hots: unknown field`, `request.headers[0]: ...`).
 */
export function errorField(answer) {
  if (answer.field != null) return answer.field;
  const match = /^(?:[^:]*:\d+:\d+: )?([A-Za-z_][\w]*(?:\[\d+\]|\.[A-Za-z_][\w]*)*): /.exec(answer.error || "");
  return match ? match[1] : "";
}

async function sendJSON(method, path, body) {
  const response = await fetch(path, { method, body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
  const answer = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
  return { ok: response.ok, status: response.status, answer };
}

/** Sends a message of Kagami's own into an open WebSocket; resolves to an error text or null. */
export async function injectMessage(flowId, direction, text) {
  try {
    const { ok, answer } = await sendJSON("POST", `api/flows/${flowId}/messages`, { direction, text });
    return ok ? null : answer.error;
  } catch (error) {
    return `Could not send: ${error.message}`;
  }
}

/** Exchanges already held when the page (re)connects: the events only tell what happens next. */
async function syncHeld() {
  try {
    const answer = await getJSON("api/breakpoints/held");
    dispatch({ type: "heldSynced", list: answer.held });
  } catch { /* no proxy in this process: nothing can be held */ }
}

export async function loadBreakpoints() {
  try {
    dispatch({ type: "breakpointsLoaded", document: await getJSON("api/breakpoints") });
  } catch (error) {
    dispatch({ type: "breakpointsLoaded", document: null, error: `Could not read the breakpoints: ${error.message}` });
  }
}

export async function saveBreakpoints() {
  dispatch({ type: "breakpointsSaving" });
  try {
    const { ok, answer } = await sendJSON("PUT", "api/breakpoints", state.breakpoints.draft);
    if (ok) dispatch({ type: "breakpointsSaved", document: answer });
    else dispatch({ type: "breakpointsSaveFailed", error: { error: answer.error, field: errorField(answer), message: answer.message || answer.error } });
  } catch (error) {
    dispatch({ type: "breakpointsSaveFailed", error: { error: `Could not save: ${error.message}`, field: "", message: error.message } });
  }
}

/** Execute (with the editor's values), abort or cancel a held exchange. */
export async function decideHeld(held, action) {
  const body = action === "execute" ? { action, ...heldEdit(held, state.heldDrafts[held.id]) } : { action };
  try {
    const { ok, status, answer } = await sendJSON("POST", `api/breakpoints/held/${held.id}`, body);
    if (ok || status === 404 || status === 409) {
      // Decided (here, elsewhere, or by the auto-continue time): it is no longer held.
      dispatch({ type: "heldReleased", id: held.id });
      if (!ok) dispatch({ type: "notice", message: answer.error });
    } else dispatch({ type: "heldFailed", id: held.id, field: errorField(answer), message: answer.error });
  } catch (error) {
    dispatch({ type: "heldFailed", id: held.id, field: "", message: `Could not send: ${error.message}` });
  }
}

/** The curl command Kagami builds for an exchange's request. */
export async function loadCurl(id) {
  const response = await fetch(`api/flows/${id}/curl`);
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try { message = (await response.json()).error || message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  return (await response.text()).replace(/\n$/, "");
}

/** Repeat / Repeat Advanced: answers once every repeat has ended, with the summary. */
export async function repeatFlow(id, plan) {
  const { ok, answer } = await sendJSON("POST", `api/flows/${id}/repeat`, plan);
  if (!ok) throw Object.assign(new Error(answer.error), { field: errorField(answer) });
  return answer;
}

/** The SSL Proxying list in force, into the store. */
export async function loadSSLProxying() {
  try {
    dispatch({ type: "sslLoaded", document: await getJSON("api/ssl-proxying") });
  } catch (error) {
    dispatch({ type: "sslLoaded", document: null, error: `Could not read the SSL Proxying list: ${error.message}` });
  }
}

export async function saveSSLProxying() {
  dispatch({ type: "sslSaving" });
  const { include, exclude } = state.ssl.draft;
  try {
    const { ok, answer } = await sendJSON("PUT", "api/ssl-proxying", { include, exclude });
    if (ok) dispatch({ type: "sslLoaded", document: answer });
    else dispatch({ type: "sslSaveFailed", error: { error: answer.error, field: errorField(answer) } });
  } catch (error) {
    dispatch({ type: "sslSaveFailed", error: { error: `Could not save: ${error.message}`, field: "" } });
  }
}

/** What a device needs to use the proxy (addresses, port, CA page), into the store. */
export async function loadDevice() {
  try {
    dispatch({ type: "deviceLoaded", device: await getJSON("api/device") });
  } catch (error) {
    dispatch({ type: "deviceLoaded", device: { error: error.message } });
  }
}

/** Sends a composed request through the proxy; resolves to `{flowId, status, error}`. */
export async function sendComposed(request) {
  const { ok, answer } = await sendJSON("POST", "api/compose", request);
  if (!ok) throw Object.assign(new Error(answer.error), { field: errorField(answer) });
  return answer;
}

/** Writes an exchange's response body to a file (Map Local's source). */
export async function saveResponseBody(id, path, overwrite = false) {
  const { ok, answer } = await sendJSON("POST", `api/flows/${id}/response/save`, { path, overwrite });
  if (!ok) throw Object.assign(new Error(answer.error), { status: answer.status });
  return answer;
}
