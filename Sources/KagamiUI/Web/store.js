// The page's one store: state changes only through dispatched actions, and every view renders
// from that state. Large lists are changed in place (copying 100,000 rows per event would stall
// the page); listeners are told which action ran so they can update only what changed.
import { parseFilter } from "./filter.js";
import { applyListEdit, getPath, setPath } from "./editing.js";
import { heldDraft } from "./held.js";

export const state = {
  connection: "connecting", // connecting | live | disconnected
  loading: true,
  status: null,
  flows: [],
  byId: new Map(),
  visible: [], // indexes into flows passing the filter
  filterText: "",
  filter: null,
  paused: false,
  held: [], // flows that arrived while paused
  view: "sequence",
  selectedId: null,
  marked: new Set(), // ids chosen for "Export selected": click, Ctrl/Cmd-click, Shift-click
  markAnchor: null,
  detail: null, // { id, flow, error }
  inspectorTab: "overview",
  bodyMode: {}, // part -> text | json | hex | image
  error: null,
  notice: null, // a passing message (an import's result)
  // The rules document: `saved` is what the server has, `draft` what the editor shows.
  rules: { loading: false, saved: null, draft: null, presets: [], dirty: false, saving: false, saveError: null, loadError: null, savedAt: null },
  breakpoints: { saved: null, draft: null, dirty: false, saving: false, saveError: null, loadError: null },
  heldExchanges: [], // exchanges paused at a breakpoint, oldest first
  heldDrafts: {}, // held id -> the editor's values
  heldOpen: null, // the held id the editor shows
  heldHidden: false, // the editor was put away ("Later") until the next exchange is held
  heldError: null, // { id, field, message } from the last refused decision
  // The Sequence list's columns: widths (px) the user dragged and columns hidden, kept per browser.
  columns: readColumns(),
  // The SSL Proxying list: `saved` is what the proxy has, `draft` what the panel shows.
  ssl: { saved: null, draft: null, dirty: false, saving: false, error: null, loadError: null },
  device: null, // what GET /api/device says: addresses, port, CA page
  compose: null, // the Compose editor's values while it is open
  mapLocalSources: {}, // Map Local rule index (in the draft) -> the exchange it was made from
  menu: null, // the open context menu: { x, y, flow } or { x, y, node }
};

function readColumns() {
  try {
    const saved = JSON.parse(localStorage.getItem("kagami.columns") || "{}");
    return { widths: saved.widths || {}, hidden: saved.hidden || [] };
  } catch { return { widths: {}, hidden: [] }; }
}

function saveColumns() {
  try { localStorage.setItem("kagami.columns", JSON.stringify(state.columns)); } catch { /* private mode: not kept */ }
}

const clone = (value) => (value == null ? value : JSON.parse(JSON.stringify(value)));

const listeners = new Set();
export function subscribe(listener) { listeners.add(listener); return () => listeners.delete(listener); }

export function dispatch(action) {
  reduce(action);
  for (const listener of listeners) listener(action, state);
}

function appendFlows(flows) {
  const added = [];
  for (const flow of flows) {
    const existing = state.byId.get(flow.id);
    if (existing !== undefined) { state.flows[existing] = flow; continue; }
    const index = state.flows.push(flow) - 1;
    state.byId.set(flow.id, index);
    if (!state.filter || state.filter(flow)) { state.visible.push(index); added.push(index); }
  }
  return added;
}

function refilter() {
  const { flows, filter } = state;
  const visible = [];
  for (let i = 0; i < flows.length; i++) if (!filter || filter(flows[i])) visible.push(i);
  state.visible = visible;
}

function reduce(action) {
  switch (action.type) {
    case "status": state.status = action.status; break;
    case "connection": state.connection = action.connection; break;
    case "loadStarted": state.loading = true; break;
    case "flowsLoaded":
      // A fresh read of the session replaces the list; flows that came live meanwhile are kept.
      state.flows = [];
      state.byId = new Map();
      state.visible = [];
      appendFlows(action.flows);
      appendFlows(action.live || []);
      state.loading = false;
      if (state.selectedId && !state.byId.has(state.selectedId)) { state.selectedId = null; state.detail = null; }
      break;
    case "flowArrived":
      if (state.paused) state.held.push(action.flow);
      else {
        // A flow can arrive again, changed (the contract check adds its violations).
        action.replaced = state.byId.has(action.flow.id);
        action.added = appendFlows([action.flow]);
        if (action.replaced && state.filter) refilter();
      }
      break;
    case "filterChanged":
      state.filterText = action.text;
      state.filter = parseFilter(action.text);
      refilter();
      // The inspector never shows an exchange the filter hides.
      if (state.selectedId && state.filter) {
        const index = state.byId.get(state.selectedId);
        if (index === undefined || !state.filter(state.flows[index])) { state.selectedId = null; state.detail = null; action.deselected = true; }
      }
      break;
    case "columnResized": state.columns = { ...state.columns, widths: { ...state.columns.widths, [action.column]: action.width } }; saveColumns(); break;
    case "columnToggled": {
      const hidden = new Set(state.columns.hidden);
      if (hidden.has(action.column)) hidden.delete(action.column); else hidden.add(action.column);
      state.columns = { ...state.columns, hidden: [...hidden] };
      saveColumns();
      break;
    }
    case "columnsReset": state.columns = { widths: {}, hidden: [] }; saveColumns(); break;
    case "menuOpened": state.menu = action.menu; break;
    case "menuClosed": state.menu = null; break;
    case "sslLoaded":
      state.ssl = { ...state.ssl, saved: action.document, draft: clone(action.document), dirty: false, saving: false, error: null, loadError: action.error || null };
      break;
    case "sslHostAdded": {
      // From a row's menu: the host joins the list (once) and the panel shows it, unsaved.
      const list = state.ssl.draft[action.list] || (state.ssl.draft[action.list] = []);
      if (!list.includes(action.host)) list.push(action.host);
      // Enabling a host takes it off the exclude list, which would win. (Excluding leaves the
      // include list alone: emptied, it would mean every host.)
      if (action.list === "include") state.ssl.draft.exclude = (state.ssl.draft.exclude || []).filter((host) => host !== action.host);
      state.ssl.dirty = true;
      break;
    }
    case "sslChanged": state.ssl.draft[action.list] = action.hosts; state.ssl.dirty = true; break;
    case "sslSaving": state.ssl.saving = true; break;
    case "sslSaveFailed": state.ssl.saving = false; state.ssl.error = action.error; break;
    case "sslReverted": state.ssl.draft = clone(state.ssl.saved); state.ssl.dirty = false; state.ssl.error = null; break;
    case "mapLocalSource": state.mapLocalSources = { ...state.mapLocalSources, [action.index]: action.flowId }; break;
    case "deviceLoaded": state.device = action.device; break;
    case "composeOpened": state.compose = action.draft; break;
    case "composeEdited": state.compose = { ...state.compose, ...action.values }; break;
    case "composeClosed": state.compose = null; break;
    case "pauseToggled":
      state.paused = !state.paused;
      if (!state.paused) { appendFlows(state.held); state.held = []; }
      break;
    case "marked": {
      const { id, mode } = action;
      if (mode === "toggle") {
        if (state.marked.has(id)) state.marked.delete(id); else state.marked.add(id);
        state.markAnchor = id;
      } else if (mode === "range" && state.markAnchor) {
        const ids = state.visible.map((i) => state.flows[i].id);
        const from = ids.indexOf(state.markAnchor), to = ids.indexOf(id);
        if (from < 0 || to < 0) { state.marked = new Set([id]); state.markAnchor = id; break; }
        state.marked = new Set(ids.slice(Math.min(from, to), Math.max(from, to) + 1));
      } else {
        state.marked = new Set([id]);
        state.markAnchor = id;
      }
      break;
    }
    case "cleared":
      state.marked = new Set(); state.markAnchor = null;
      state.flows = []; state.byId = new Map(); state.visible = []; state.held = [];
      state.selectedId = null; state.detail = null;
      break;
    case "viewChanged": state.view = action.view; break;
    case "selected":
      state.selectedId = action.id;
      state.detail = action.id ? { id: action.id, flow: null, error: null } : null;
      state.bodyMode = {};
      break;
    case "detailLoaded":
      if (state.detail && state.detail.id === action.id) { state.detail.flow = action.flow; state.detail.error = action.error || null; }
      break;
    case "inspectorTab": state.inspectorTab = action.tab; break;
    case "bodyMode": state.bodyMode = { ...state.bodyMode, [action.part]: action.mode }; break;
    case "rulesLoading": state.rules.loading = true; state.rules.loadError = null; break;
    case "rulesLoaded":
      state.rules = { ...state.rules, loading: false, saved: action.document, draft: clone(action.document), presets: action.presets || state.rules.presets,
        dirty: false, saveError: null, loadError: action.error || null };
      break;
    case "rulesChanged": setPath(state.rules.draft, action.path, action.value); state.rules.dirty = true; break;
    case "rulesListEdited": applyListEdit(state.rules.draft, action.edit); state.rules.dirty = true; break;
    case "rulesReverted": state.mapLocalSources = {}; state.rules.draft = clone(state.rules.saved); state.rules.dirty = false; state.rules.saveError = null; break;
    case "rulesSaving": state.rules.saving = true; break;
    case "rulesSaved":
      state.rules = { ...state.rules, saving: false, saved: action.document, draft: clone(action.document), dirty: false, saveError: null, savedAt: Date.now(),
        presets: action.presets || state.rules.presets };
      break;
    case "rulesSaveFailed": state.rules.saving = false; state.rules.saveError = action.error; break;
    case "breakpointsLoaded":
      state.breakpoints = { ...state.breakpoints, saved: action.document, draft: clone(action.document), dirty: false, saveError: null, loadError: action.error || null };
      break;
    case "breakpointsChanged": setPath(state.breakpoints.draft, action.path, action.value); state.breakpoints.dirty = true; break;
    case "breakpointsListEdited": applyListEdit(state.breakpoints.draft, action.edit); state.breakpoints.dirty = true; break;
    case "breakpointsReverted": state.breakpoints.draft = clone(state.breakpoints.saved); state.breakpoints.dirty = false; state.breakpoints.saveError = null; break;
    case "breakpointsSaving": state.breakpoints.saving = true; break;
    case "breakpointsSaved": state.breakpoints = { ...state.breakpoints, saving: false, saved: action.document, draft: clone(action.document), dirty: false, saveError: null }; break;
    case "breakpointsSaveFailed": state.breakpoints.saving = false; state.breakpoints.saveError = action.error; break;
    case "heldArrived":
      if (!state.heldExchanges.some((h) => h.id === action.held.id)) {
        state.heldExchanges.push(action.held);
        state.heldDrafts[action.held.id] = heldDraft(action.held);
      }
      if (!state.heldOpen) state.heldOpen = action.held.id;
      state.heldHidden = false;
      break;
    case "heldSynced": {
      const known = new Set(action.list.map((h) => h.id));
      const before = new Set(state.heldExchanges.map((h) => h.id));
      state.heldExchanges = action.list;
      for (const h of action.list) if (!state.heldDrafts[h.id]) state.heldDrafts[h.id] = heldDraft(h);
      for (const id of Object.keys(state.heldDrafts)) if (!known.has(id)) delete state.heldDrafts[id];
      if (!known.has(state.heldOpen)) state.heldOpen = action.list[0]?.id ?? null;
      if (action.list.some((h) => !before.has(h.id))) state.heldHidden = false;
      break;
    }
    case "heldReleased":
      state.heldExchanges = state.heldExchanges.filter((h) => h.id !== action.id);
      delete state.heldDrafts[action.id];
      if (state.heldOpen === action.id) state.heldOpen = state.heldExchanges[0]?.id ?? null;
      if (state.heldError?.id === action.id) state.heldError = null;
      break;
    case "heldOpened": state.heldOpen = action.id; state.heldHidden = false; break;
    case "heldHidden": state.heldHidden = true; break;
    case "heldEdited": {
      // Kept as typed: an emptied body is an empty body, not "keep the original".
      const draft = state.heldDrafts[action.id];
      if (draft) { const parent = getPath(draft, action.path.slice(0, -1)); parent[action.path[action.path.length - 1]] = action.value ?? ""; }
      break;
    }
    case "heldFailed": state.heldError = { id: action.id, field: action.field, message: action.message }; break;
    case "error": state.error = action.message; state.notice = null; break;
    case "notice": state.notice = action.message; state.error = null; break;
    case "bannerClosed": state.notice = null; state.error = null; break;
  }
}
