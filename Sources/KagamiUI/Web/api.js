// The admin API and the live event stream, with reconnection when Kagami goes away.
import { dispatch, listComplete, state } from "./store.js";
import { heldEdit } from "./held.js";

// The first read shows this many of the newest rows at once; older ones follow a page at a time.
// (Small enough that a page being read when the filter changes doesn't keep its answer waiting.)
const FIRST_PAGE = 1000;
const PAGE = 5000;

/**
 * fetch, and an answer that is not ok thrown as an Error with the API's `error` text (or the
 * status when the body is not the API's JSON), its `status`, and the whole `answer` (`field`…).
 */
async function call(path, options = {}) {
  const response = await fetch(path, options);
  if (response.ok) return response;
  const answer = await response.json().catch(() => ({}));
  throw Object.assign(new Error(answer.error || `${response.status} ${response.statusText}`), { status: response.status, answer });
}

export async function getJSON(path, signal) {
  return (await call(path, { headers: { Accept: "application/json" }, signal })).json();
}

/** A JSON body sent with `method`; the answer's JSON, or the API's refusal thrown (`call`). */
async function sendJSON(method, path, body) {
  return (await call(path, { method, body: JSON.stringify(body), headers: { "Content-Type": "application/json" } })).json();
}

/** What a failed save shows: the server's refusal with the field it names, or why it was not sent. */
function refusal(error, verb = "save") {
  if (!error.answer) return { error: `Could not ${verb}: ${error.message}`, field: "", message: error.message };
  return { error: error.message, field: errorField(error.answer), message: error.answer.message || error.message };
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
let retryDelay = 1000;
let resyncDelay = 1000; // before reading the session again after a failed read
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
    dispatch({ type: "heldArrived", held });
  });
  source.addEventListener("released", (event) => {
    dispatch({ type: "heldReleased", id: JSON.parse(event.data).id });
  });
  source.addEventListener("note", (event) => dispatch({ type: "noteArrived", note: JSON.parse(event.data) }));
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

/** Closes the event stream (the page is being left); `connect` opens it again. */
export function disconnect() {
  if (source) source.close();
  source = null;
}

/**
 * Reads the list again: the newest page of the session (or of the server's answer to `query`,
 * the filter box's text) is shown at once, then older pages are put in front in the background
 * until the list holds `state.list.bound` rows or the oldest exchange.
 */
async function resync(query = requested) {
  abortReading();
  loadNotes();
  const read = reading;
  requested = query;
  syncing = [];
  dispatch({ type: "loadStarted" });
  const started = performance.now();
  let page;
  try {
    page = await readPage(FIRST_PAGE, null, query);
  } catch (error) {
    if (read !== reading || error.name === "AbortError") return;
    // The session's store may be away for a moment (a shared database restarting): the read is
    // tried again, less and less often, until it succeeds or a newer read takes its place.
    syncing = null;
    dispatch({ type: "readFailed", message: `Could not read the session: ${error.message} (trying again in ${resyncDelay / 1000} s)` });
    setTimeout(() => { if (read === reading) resync(query); }, resyncDelay);
    resyncDelay = Math.min(resyncDelay * 2, 8000);
    return;
  }
  if (read !== reading) return;
  resyncDelay = 1000;
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

/** The session's notes, read again with the list (one that arrives meanwhile is kept once). */
async function loadNotes() {
  const since = Date.now();
  try {
    const { notes } = await getJSON("api/notes");
    dispatch({ type: "notesLoaded", notes, since });
  } catch { /* the list's own read reports a session that can't be read; the next resync tries again */ }
}

export async function clearSession() {
  await call("api/flows", { method: "DELETE" });
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
  const response = await call(`api/flows/${id}/${part}/body${decode ? "?decode=1" : ""}`);
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
  return (await call("api/import.har", { method: "POST", body: file, headers: { "Content-Type": "application/json" } })).json();
}

/** Downloads the given exchanges as an HTTP Archive. */
export async function exportHAR(ids, filename) {
  try {
    const response = await call("api/export.har", { method: "POST", body: JSON.stringify({ ids }), headers: { "Content-Type": "application/json" } });
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

/** The rules document in force, the throttle presets and the kinds of rewrite, into the store. */
export async function loadRules() {
  dispatch({ type: "editorLoading", editor: "rules" });
  try {
    const [document, presets, schema] = await Promise.all([getJSON("api/rules"), getJSON("api/throttle/presets"), getJSON("api/rules/schema")]);
    dispatch({ type: "editorLoaded", editor: "rules", document, presets: presets.presets, rewriteTypes: schema.rewriteTypes, mapLocalFolders: schema.mapLocalFolders });
  } catch (error) {
    dispatch({ type: "editorLoaded", editor: "rules", document: null, error: `Could not read the rules: ${error.message}` });
  }
}

/**
 * Saves the draft of an editor (`rules`, `breakpoints`) whole with PUT api/NAME; a refused
 * document comes back with the field to fix.
 */
export async function saveEditor(name) {
  dispatch({ type: "editorSaving", editor: name });
  try {
    const document = await sendJSON("PUT", `api/${name}`, state[name].draft);
    // Custom presets may have changed with the rules.
    const presets = name === "rules" ? await getJSON("api/throttle/presets").then((p) => p.presets, () => null) : null;
    dispatch({ type: "editorSaved", editor: name, document, presets });
  } catch (error) {
    dispatch({ type: "editorSaveFailed", editor: name, error: refusal(error) });
  }
}

/**
 * The field an error names: `field` when the API gives it, else the one in the message
 * (`request body:3:5: breakpoints[0].location.hots: unknown field`, `request.headers[0]: ...`).
 */
function errorField(answer) {
  if (answer.field != null) return answer.field;
  const match = /^(?:[^:]*:\d+:\d+: )?([A-Za-z_][\w]*(?:\[\d+\]|\.[A-Za-z_][\w]*)*): /.exec(answer.error || "");
  return match ? match[1] : "";
}

/** Sends a message of Kagami's own into an open WebSocket; resolves to an error text or null. */
export async function injectMessage(flowId, direction, text) {
  try {
    await sendJSON("POST", `api/flows/${flowId}/messages`, { direction, text });
    return null;
  } catch (error) {
    return refusal(error, "send").error;
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
  dispatch({ type: "editorLoading", editor: "breakpoints" });
  try {
    dispatch({ type: "editorLoaded", editor: "breakpoints", document: await getJSON("api/breakpoints") });
  } catch (error) {
    dispatch({ type: "editorLoaded", editor: "breakpoints", document: null, error: `Could not read the breakpoints: ${error.message}` });
  }
}

/** Execute (with the editor's values), abort or cancel a held exchange. */
export async function decideHeld(held, action) {
  const body = action === "execute" ? { action, ...heldEdit(held, state.heldDrafts[held.id]) } : { action };
  try {
    await sendJSON("POST", `api/breakpoints/held/${held.id}`, body);
    dispatch({ type: "heldReleased", id: held.id });
  } catch (error) {
    if (error.status === 404 || error.status === 409) {
      // Decided elsewhere, or by the auto-continue time: it is no longer held.
      dispatch({ type: "heldReleased", id: held.id });
      dispatch({ type: "notice", message: error.message });
    } else {
      const { field, error: message } = refusal(error, "send");
      dispatch({ type: "heldFailed", id: held.id, field, message });
    }
  }
}

/** The curl command Kagami builds for an exchange's request. */
export async function loadCurl(id) {
  return (await (await call(`api/flows/${id}/curl`)).text()).replace(/\n$/, "");
}

/** The grpcurl command Kagami builds for a gRPC call (the request's messages as JSON). */
export async function loadGRPCurl(id) {
  return (await (await call(`api/flows/${id}/grpcurl`)).text()).replace(/\n$/, "");
}

/** Repeat / Repeat Advanced: answers once every repeat has ended, with the summary. */
export async function repeatFlow(id, plan) {
  return sendJSON("POST", `api/flows/${id}/repeat`, plan).catch((error) => { throw Object.assign(error, { field: refusal(error).field }); });
}

/** The SSL Proxying list in force, into the store. */
export async function loadScenarios() {
  try {
    dispatch({ type: "scenariosLoaded", document: await getJSON("api/scenarios") });
  } catch (error) {
    dispatch({ type: "scenariosLoaded", error: `Could not read the scenarios: ${error.message}` });
  }
}

/** Puts the scenario `name` in force, or none when null; the next requests get its states. */
export async function useScenario(name) {
  try {
    dispatch({ type: "scenariosLoaded", document: await sendJSON("PUT", "api/scenarios/active", { active: name }) });
  } catch (error) {
    dispatch({ type: "scenariosLoaded", error: error.message });
  }
}

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
    dispatch({ type: "sslLoaded", document: await sendJSON("PUT", "api/ssl-proxying", { include, exclude }) });
  } catch (error) {
    dispatch({ type: "sslSaveFailed", error: refusal(error) });
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

/** Who may use the proxy (GET /api/clients): networks, allowed, pending, denied. */
export async function loadClients() {
  try {
    dispatch({ type: "clientsLoaded", clients: await getJSON("api/clients") });
  } catch (error) {
    dispatch({ type: "clientsLoaded", clients: { error: error.message } });
  }
}

/** Allows, denies or forgets a device's address (POST /api/clients). */
export async function decideClient(address, decision) {
  dispatch({ type: "clientsLoaded", clients: await sendJSON("POST", "api/clients", { address, decision }) });
}

/** Sends a composed request through the proxy; resolves to `{flowId, status, error}`. */
export async function sendComposed(request) {
  return sendJSON("POST", "api/compose", request).catch((error) => { throw Object.assign(error, { field: refusal(error).field }); });
}

/** Writes an exchange's response body to a file (Map Local's source). */
export async function saveResponseBody(id, path, overwrite = false) {
  return sendJSON("POST", `api/flows/${id}/response/save`, { path, overwrite });
}

/** An API description drafted from the session (POST /api/draft): `{format, text, operations, exchanges, skipped}`. */
export async function draftDescription(options) {
  return sendJSON("POST", "api/draft", options);
}

/** The sessions the Diff view can compare this one with (GET /api/diff/sessions): names. */
export async function diffSessions() {
  return (await getJSON("api/diff/sessions")).sessions;
}

/** Two captures compared (POST /api/diff): the report as `kagami diff --format json` writes it. */
export async function compareCaptures(request) {
  return sendJSON("POST", "api/diff", request);
}

/** An exchange of this session (`session` null) or another, with both bodies as text. */
export async function diffExchange(id, session) {
  return getJSON(`api/diff/exchange?id=${encodeURIComponent(id)}${session ? `&session=${encodeURIComponent(session)}` : ""}`);
}
