// The admin API and the live event stream, with reconnection when Kagami goes away.
import { dispatch, state } from "./store.js";

const PAGE = 10000;

export async function getJSON(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try { message = (await response.json()).error || message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  return response.json();
}

/** Every flow summary of the session, a page at a time. */
async function loadAll() {
  const flows = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await getJSON(`api/flows?offset=${offset}&limit=${PAGE}`);
    flows.push(...page.flows);
    if (page.flows.length < PAGE) return flows;
  }
}

let source = null;
let retryDelay = 1000;
let syncing = null; // flows received live while the full list loads

/** Opens the event stream; on each (re)connect the list is read again so nothing is missed. */
export function connect() {
  if (source) source.close();
  dispatch({ type: "connection", connection: state.connection === "live" ? "connecting" : state.connection });
  source = new EventSource("api/events");
  source.addEventListener("hello", () => {
    retryDelay = 1000;
    dispatch({ type: "connection", connection: "live" });
    resync();
    getJSON("api/status").then((status) => dispatch({ type: "status", status })).catch(() => {});
  });
  source.addEventListener("flow", (event) => {
    const flow = JSON.parse(event.data);
    if (syncing) syncing.push(flow);
    else dispatch({ type: "flowArrived", flow });
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

async function resync() {
  if (syncing) return;
  syncing = [];
  dispatch({ type: "loadStarted" });
  const started = performance.now();
  try {
    const flows = await loadAll();
    const live = syncing;
    syncing = null;
    dispatch({ type: "flowsLoaded", flows, live, took: performance.now() - started });
  } catch (error) {
    syncing = null;
    dispatch({ type: "error", message: `Could not read the session: ${error.message}` });
  }
}

export async function clearSession() {
  const response = await fetch("api/flows", { method: "DELETE" });
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
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
export async function loadBody(id, part) {
  const response = await fetch(`api/flows/${id}/${part}/body?decode=1`);
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  return {
    bytes: new Uint8Array(await response.arrayBuffer()),
    contentType: response.headers.get("Content-Type") || "",
    decoded: response.headers.get("X-Kagami-Decoded"),
    decodeError: response.headers.get("X-Kagami-Decode-Error"),
    truncated: response.headers.get("X-Kagami-Body-Truncated") === "true",
  };
}
