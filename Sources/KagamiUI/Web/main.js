// Starts the page: mounts the views on the store, wires the toolbar, opens the event stream.
import { dispatch, state, subscribe } from "./store.js";
import { applyFilter, clearSession, connect, disconnect, exportHAR, importHAR, loadDetail, loadDevice, loadOlder, repeatFlow } from "./api.js";
import { mountSequence } from "./sequence.js";
import { mountStructure } from "./structure.js";
import { mountInspector } from "./inspector.js";
import { mountRules } from "./rules.js";
import { mountBreakpoints } from "./breakpoints.js";
import { mountDraft } from "./draft.js";
import { mountContractView } from "./contract.js";
import { mountDiff } from "./diff.js";
import { el } from "./format.js";
import { mountMenu } from "./menu.js";
import { blankCompose, mountCompose } from "./compose.js";
import { mountSSLProxying } from "./ssl.js";
import { mountScenarios } from "./scenarios.js";
import { mountDevice } from "./device.js";
import { mountSplitter } from "./splitter.js";
import { mountNotes } from "./notes.js";

const $ = (id) => document.getElementById(id);

// The address Kagami printed carries the admin token; the browser keeps it as a cookie from the
// page's answer on, so it leaves the address bar, the history and screenshots.
if (new URLSearchParams(location.search).has("token")) {
  const rest = new URLSearchParams(location.search);
  rest.delete("token");
  history.replaceState(null, "", location.pathname + (rest.size ? `?${rest}` : "") + location.hash);
}

function select(id) {
  if (id === state.selectedId) return;
  dispatch({ type: "selected", id });
  if (id) loadDetail(id);
}

/** Selects an exchange Kagami made for you (a composed request): it alone is chosen, as a click would. */
function selectOnly(id) {
  dispatch({ type: "marked", id, mode: "only" });
  select(id);
}

const openMenu = (menu) => dispatch({ type: "menuOpened", menu });
mountSequence({ scroll: $("sequence-scroll"), spacer: $("sequence-spacer"), head: $("sequence-head"), onSelect: select, onMenu: openMenu });
mountNotes({ strip: $("notes"), badge: $("notes-count"), onSelect: select });
mountStructure({ container: $("structure"), onSelect: select, onMenu: openMenu });
mountSSLProxying({ container: $("ssl") });
mountScenarios({ container: $("scenarios"), badge: $("scenario-active") });
mountDevice({ container: $("device") });
mountSplitter({ handle: $("splitter"), inspector: $("inspector"), workspace: document.querySelector(".workspace") });
mountCompose({ dialog: $("compose-dialog"), onSelect: selectOnly });
$("compose").addEventListener("click", () => dispatch({ type: "composeOpened", draft: blankCompose() }));
mountRules({ container: $("rules") });
mountBreakpoints({ container: $("breakpoints"), dialog: $("held-dialog") });
mountDraft({ after: $("export-selected") });

// The Session menu closes once one of its actions is chosen (the import once its file is),
// on a click elsewhere and on Escape.
const sessionMenu = $("session-menu");
sessionMenu.addEventListener("click", (event) => {
  if (event.target.closest(".toolbar-menu-items button, .toolbar-menu-items a")) sessionMenu.open = false;
});
$("import-file").addEventListener("change", () => { sessionMenu.open = false; });
document.addEventListener("click", (event) => {
  if (sessionMenu.open && !sessionMenu.contains(event.target)) sessionMenu.open = false;
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && sessionMenu.open) {
    sessionMenu.open = false;
    sessionMenu.querySelector("summary").focus();
  }
});
mountContractView({ container: $("contract") });
mountDiff({ container: $("diff") });
function showTool(title, text, note) {
    $("tool-title").textContent = title;
    $("tool-text").value = text;
    $("tool-note").textContent = note;
    const dialog = $("tool-dialog");
    if (!dialog.open) dialog.showModal();
    $("tool-text").select();
    // The clipboard needs a focused, permitted page; the text stays selectable in the dialog either way.
    navigator.clipboard?.writeText(text).then(() => { $("tool-note").textContent = `${note} Copied to the clipboard.`.trim(); }, () => {});
}

function showRepeat(flow) {
    dispatch({ type: "repeatOpened", flow });
    $("repeat-target").textContent = `${flow.request.method} ${flow.url}`;
    $("repeat-error").hidden = true;
    $("repeat-summary").hidden = true;
    $("repeat-start").disabled = false;
    $("repeat-dialog").showModal();
}

mountInspector({ container: $("inspector"), showTool, showRepeat });
mountMenu({ container: $("context-menu"), showTool, showRepeat, onSelect: select });

// Repeat Advanced: the dialog stays open with the summary once every repeat has ended.
$("repeat-close").addEventListener("click", () => $("repeat-dialog").close());
$("repeat-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const target = state.repeatTarget;
  if (!target) return;
  const plan = { count: Number($("repeat-count").value), concurrency: Number($("repeat-concurrency").value), delayMs: Number($("repeat-delay").value) };
  $("repeat-start").disabled = true;
  $("repeat-error").hidden = true;
  $("repeat-summary").hidden = false;
  $("repeat-summary").textContent = `Sending ${plan.count}…`;
  try {
    const summary = await repeatFlow(target.id, plan);
    const statuses = Object.entries(summary.statuses).map(([status, count]) => `${status}: ${count}`).join(", ") || "none";
    const durations = summary.durationMs ? `\nDuration: min ${summary.durationMs.min} ms, median ${summary.durationMs.median} ms, max ${summary.durationMs.max} ms` : "";
    $("repeat-summary").textContent = `${summary.summary}\nSent: ${summary.sent}  Failed: ${summary.failed}\nStatuses: ${statuses}${durations}${summary.firstError ? `\nFirst error: ${summary.firstError}` : ""}`;
  } catch (error) {
    $("repeat-summary").hidden = true;
    $("repeat-error").hidden = false;
    $("repeat-error").textContent = error.message;
  } finally {
    $("repeat-start").disabled = false;
  }
});

let filterTimer = 0;
$("filter").addEventListener("input", (event) => {
  clearTimeout(filterTimer);
  const text = event.target.value;
  filterTimer = setTimeout(() => applyFilter(text), 120);
});
$("pause").addEventListener("click", () => dispatch({ type: "pauseToggled" }));
$("clear").addEventListener("click", () => clearSession().catch((error) => dispatch({ type: "error", message: `Could not clear: ${error.message}` })));
$("import-file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  event.target.value = "";
  if (!file) return;
  try {
    const answer = await importHAR(file);
    const skipped = answer.skipped || [];
    const note = skipped.length ? ` Skipped ${skipped.length} entr${skipped.length === 1 ? "y" : "ies"} it could not read: ${skipped.map((entry) => entry.error).join("; ")}` : "";
    const notes = answer.notes ? ` and ${answer.notes} note${answer.notes === 1 ? "" : "s"}` : "";
    dispatch({ type: "notice", message: `Imported ${answer.imported} exchange${answer.imported === 1 ? "" : "s"}${notes} from ${file.name}.${note}` });
  } catch (error) {
    dispatch({ type: "error", message: `Could not import ${file.name}: ${error.message}` });
  }
});
$("export-selected").addEventListener("click", () => {
  // In list order, not in the order they were chosen.
  const ids = state.visible.map((index) => state.flows[index].id).filter((id) => state.marked.has(id));
  exportHAR(ids, "kagami-selected.har");
});
$("export-shown").addEventListener("click", () => {
  exportHAR(state.visible.map((index) => state.flows[index].id), "kagami-shown.har");
});
for (const button of document.querySelectorAll("[data-view]")) {
  button.addEventListener("click", () => dispatch({ type: "viewChanged", view: button.dataset.view }));
}

function renderChrome() {
  const { connection, loading, flows, visible, paused, held, view, status, error, notice } = state;
  $("connection").className = `connection ${connection}`;
  $("connection").textContent = connection === "live" ? "Live" : connection === "connecting" ? "Connecting…" : "Disconnected";
  const banner = $("banner");
  banner.classList.toggle("notice", connection !== "disconnected" && !error && !!notice);
  if (connection === "disconnected") {
    banner.hidden = false;
    banner.textContent = "Lost the connection to Kagami. Reconnecting… (the list below is what was captured until then)";
  } else if (error || notice) {
    banner.hidden = false;
    banner.replaceChildren(el("span", { id: "banner-text" }, error || notice), " ",
      el("button", { id: "banner-close", onclick: () => dispatch({ type: "bannerClosed" }) }, "Dismiss"));
  } else banner.hidden = true;
  $("export-shown").disabled = visible.length === 0;
  $("export-selected").disabled = state.marked.size === 0;
  $("export-selected").textContent = state.marked.size > 1 ? `Export selected (${state.marked.size})` : "Export selected";
  // The menu's button says a choice is made, for its exports and the draft.
  sessionMenu.querySelector("summary").textContent = state.marked.size > 1 ? `Session (${state.marked.size})` : "Session";
  $("pause").textContent = paused ? `Resume${held.length ? ` (${held.length} waiting)` : ""}` : "Pause";
  $("pause").setAttribute("aria-pressed", String(paused));
  const heldCount = state.heldExchanges.length;
  $("held-count").hidden = heldCount === 0;
  $("held-count").textContent = String(heldCount);
  $("counts").textContent = countText();
  renderOlder();
  for (const button of document.querySelectorAll("[data-view]")) button.setAttribute("aria-selected", String(button.dataset.view === view));
  $("sequence").hidden = view !== "sequence";
  $("structure").hidden = view !== "structure";
  $("rules").hidden = view !== "rules";
  $("breakpoints").hidden = view !== "breakpoints";
  $("ssl").hidden = view !== "ssl";
  $("scenarios").hidden = view !== "scenarios";
  $("device").hidden = view !== "device";
  document.body.dataset.view = view;
  const listView = view === "sequence" || view === "structure";
  $("loading").hidden = !(listView && loading && flows.length === 0 && connection !== "disconnected");
  const empty = listView && !loading && flows.length === 0;
  $("empty").hidden = !empty;
  if (empty) renderEmpty();
  document.body.dataset.connection = connection;
  document.body.dataset.loading = String(loading);
}

/** "N exchanges", or "N of TOTAL exchanges" when the list shows fewer than the session has
 * ("N+ of": the server has more matches than the list holds). */
function countText() {
  const { visible, flows, list } = state;
  const total = Math.max(list.total, flows.length);
  if (visible.length === total) return `${total} exchanges`;
  const more = state.filter && (list.older != null || list.trimmed > 0);
  return `${visible.length}${more ? "+" : ""} of ${total} exchanges`;
}

/** The line above the list when the session has older exchanges than the list holds. */
function renderOlder() {
  const { flows, list } = state;
  const bar = $("older");
  const missing = Math.max(0, list.total - flows.length);
  if (state.loading || (list.older == null && list.trimmed === 0) || (!list.query && missing === 0)) { bar.hidden = true; return; }
  bar.hidden = false;
  const what = list.query ? "Older matches" : `${missing} older exchange${missing === 1 ? "" : "s"}`;
  if (list.reading) bar.replaceChildren(el("span", {}, `Reading older exchanges… ${flows.length} in the list.`));
  else if (list.older != null) {
    bar.replaceChildren(el("span", {}, `${what} ${list.query || missing !== 1 ? "are" : "is"} not in this list. `),
      el("button", { id: "load-older", onclick: () => loadOlder() }, "Load older"),
      el("span", {}, list.query ? "" : " or filter to search the whole session."));
  } else bar.replaceChildren(el("span", {}, `${what} ${list.query || missing !== 1 ? "are" : "is"} not in this list: filter to search the whole session.`));
}

function renderEmpty() {
  const proxy = state.status?.proxy?.replace(/^http:\/\//, "") || "127.0.0.1:8888";
  const [host, port] = [proxy.slice(0, proxy.lastIndexOf(":")), proxy.slice(proxy.lastIndexOf(":") + 1)];
  // A device on the network reaches the proxy at this machine's network address, when it listens there.
  const network = state.device?.listensOnNetwork ? state.device.addresses.map(({ address }) => address) : [];
  const local = ["127.0.0.1", "localhost", "::1", "0.0.0.0", "::"].includes(host) ? "127.0.0.1" : host;
  $("empty").replaceChildren(
    el("h1", {}, "No exchanges yet"),
    el("p", {}, "Set Kagami as the HTTP and HTTPS proxy of your app, simulator or device:"),
    el("pre", { id: "empty-proxy" }, network.length
      ? `On this machine: ${local}:${port}\nFrom a device on the network: ${network.map((a) => `${a.includes(":") ? `[${a}]` : a}:${port}`).join(", ")}\nProxy port: ${port}`
      : `Proxy host: ${local}\nProxy port: ${port}`),
    el("p", {}, "A phone, tablet or simulator: ", el("button", { id: "empty-device", onclick: () => dispatch({ type: "viewChanged", view: "device" }) }, "Device setup"),
      network.length ? " gives the address and port the way iOS and Android Settings ask for them, a QR code of the certificate page and the steps."
        : " says how to let a device on your network reach the proxy (it listens on this machine only now), with a QR code of the certificate page and the steps for iOS and Android."),
    el("p", {}, "Or try it from a terminal:"),
    el("pre", {}, `curl -x http://${proxy} http://example.com/`),
    el("p", {}, "To see HTTPS, trust Kagami's certificate authority: open ", el("a", { href: state.status?.caURL || "http://kagami.ssl/", target: "_blank" }, state.status?.caURL || "http://kagami.ssl/"), " through the proxy on the device."),
    state.status ? el("p", { className: "note" }, `Session file: ${state.status.session}`) : "",
  );
}

subscribe((action) => {
  if (action.type === "flowArrived" && !state.paused && state.flows.length > 1 && action.trimmed === undefined) {
    // Only the counter changes for an ordinary new row.
    $("counts").textContent = countText();
    return;
  }
  if (action.type === "flowsLoaded") {
    window.kagamiTimings = { ...(window.kagamiTimings || {}), lastLoad: { flows: state.flows.length, fetchMs: Math.round(action.took) } };
  }
  renderChrome();
});
renderChrome();
connect();
// A page left for another may be kept in the browser's back-forward cache, its event stream
// open: browsers give a host six connections, and kept pages would take them all. It lets go
// of the stream when left, and reads the session again if it is shown once more.
window.addEventListener("pagehide", () => disconnect());
window.addEventListener("pageshow", (event) => { if (event.persisted) connect(); });
loadDevice();

// `/sessions/NAME/#flow=ID`, the link `kagami serve` gives each exchange, opens that exchange
// once the session's list has loaded.
const linked = new URLSearchParams(location.hash.slice(1)).get("flow");
if (linked) {
  const stop = subscribe((action) => {
    if (action.type !== "flowsLoaded") return;
    stop();
    select(linked);
  });
}
