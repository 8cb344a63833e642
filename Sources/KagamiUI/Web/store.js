// The page's one store: state changes only through dispatched actions, and every view renders
// from that state. Large lists are changed in place (copying 100,000 rows per event would stall
// the page); listeners are told which action ran so they can update only what changed.
//
// The list holds the newest rows of the session (or of the server's answer to the filter), at
// most `list.bound` of them: older ones are read a page at a time in the background, newest
// first, and put in front; beyond the bound they are read when asked for.
import { parseFilter } from "./filter.js";
import { applyListEdit, getPath, setPath } from "./editing.js";
import { heldDraft } from "./held.js";

export const state = {
  connection: "connecting", // connecting | live | disconnected
  loading: true,
  status: null,
  flows: [], // the rows held, in capture order (oldest first)
  byId: new Map(), // id -> key; the row's index in flows is key + shift (see indexOf)
  shift: 0, // rows put in front of (older rows read) or taken from (trimmed) the list since it was read
  visible: [], // indexes into flows passing the filter
  filterText: "",
  filter: null, // the filter box's words, for rows arriving live
  rowFilter: null, // what the page applies to the rows the server sent: every word, or only those it left unapplied
  list: {
    query: "", // the filter text the server answered the held rows for ("" = every exchange)
    total: 0, // exchanges in the session
    older: null, // the `next` to read older rows from; null when the oldest one is held
    reading: false, // older rows being read
    trimmed: 0, // oldest rows let go so that live ones stay within the bound
    bound: readBound(), // rows the page reads by itself; "Load older" raises it
  },
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
  // The session's notes (changes made to the proxy while it recorded), oldest first: shown in
  // the strip above the list, not as rows of it (notes.js says why), and as a badge on the
  // exchanges they are about (`notesByFlow`: flow id -> notes).
  notes: [],
  notesByFlow: new Map(),
  notesOpen: true,
  // The documents of the Rules and Breakpoints editors (`editorLoaded`, `editorChanged`…):
  // `saved` is what the server has, `draft` what the editor shows.
  rules: { ...editorState(), presets: [], rewriteTypes: [], mapLocalFolders: [] }, // rewriteTypes, mapLocalFolders: GET /api/rules/schema's
  breakpoints: editorState(),
  heldExchanges: [], // exchanges paused at a breakpoint, oldest first
  heldReleased: [], // the latest held ids let go (at most RELEASED_KEPT), so a late `held` read doesn't show them again
  heldShown: null, // the held id the editor's form was drawn for
  heldDrafts: {}, // held id -> the editor's values
  heldOpen: null, // the held id the editor shows
  heldHidden: false, // the editor was put away ("Later") until the next exchange is held
  heldError: null, // { id, field, message } from the last refused decision
  readFailing: false, // the shown error is a failed read of the session, cleared once a read succeeds
  // The Sequence list's columns: widths (px) the user dragged and columns hidden, kept per browser.
  columns: readColumns(),
  // The SSL Proxying list: `saved` is what the proxy has, `draft` what the panel shows.
  ssl: { saved: null, draft: null, dirty: false, saving: false, error: null, loadError: null },
  // GET /api/scenarios: the file's scenarios and the one in force; error: why a read or switch failed.
  scenarios: { document: null, error: null },
  device: null, // what GET /api/device says: addresses, port, CA page
  compose: null, // the Compose editor's values while it is open
  mapLocalSources: {}, // Map Local rule index (in the draft) -> the exchange it was made from
  menu: null, // the open context menu: { x, y, flow } or { x, y, node }
  repeatTarget: null, // the exchange Repeat Advanced sends again
};

const RELEASED_KEPT = 256;

function editorState() {
  return { loading: false, saved: null, draft: null, dirty: false, saving: false, saveError: null, loadError: null, savedAt: null };
}

/** An action of the Rules or Breakpoints editor on its document (`action.editor` names it). */
function reduceEditor(action) {
  const doc = state[action.editor];
  switch (action.type) {
    case "editorLoading": doc.loading = true; doc.loadError = null; break;
    case "editorLoaded":
      Object.assign(doc, { loading: false, saved: action.document, draft: clone(action.document), dirty: false, saveError: null, loadError: action.error || null });
      if (action.presets) doc.presets = action.presets;
      if (action.rewriteTypes) doc.rewriteTypes = action.rewriteTypes;
      if (action.mapLocalFolders) doc.mapLocalFolders = action.mapLocalFolders;
      break;
    case "editorChanged": setPath(doc.draft, action.path, action.value); doc.dirty = true; break;
    case "editorListEdited": applyListEdit(doc.draft, action.edit); doc.dirty = true; break;
    case "editorReverted":
      if (action.editor === "rules") state.mapLocalSources = {};
      doc.draft = clone(doc.saved); doc.dirty = false; doc.saveError = null;
      break;
    case "editorSaving": doc.saving = true; break;
    case "editorSaved":
      Object.assign(doc, { saving: false, saved: action.document, draft: clone(action.document), dirty: false, saveError: null, savedAt: Date.now() });
      if (action.presets) doc.presets = action.presets;
      break;
    case "editorSaveFailed": doc.saving = false; doc.saveError = action.error; break;
  }
}

/** The rows the list reads by itself: 200,000, or what localStorage `kagami.listBound` says (at least 1,000). */
function readBound() {
  try {
    const chosen = Number(localStorage.getItem("kagami.listBound"));
    if (Number.isFinite(chosen) && chosen > 0) return Math.max(1000, Math.floor(chosen));
  } catch { /* private mode */ }
  return 200000;
}

function readColumns() {
  try {
    const saved = JSON.parse(localStorage.getItem("kagami.columns") || "{}");
    return { widths: saved.widths || {}, hidden: saved.hidden || [], shown: saved.shown || [] };
  } catch { return { widths: {}, hidden: [], shown: [] }; }
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

/** The first held exchange a breakpoint holds (the editor's); loading holds are released from the lists. */
function firstToEdit(list) {
  return list.find((h) => !h.reason)?.id ?? null;
}

/** The index in `state.flows` of the row with this id, or undefined when it isn't held. */
export function indexOf(id) {
  const key = state.byId.get(id);
  return key === undefined ? undefined : key + state.shift;
}

/** Whether every exchange the held rows were read for is held (so the page can filter them alone). */
export function listComplete() {
  return state.list.older == null && state.list.trimmed === 0;
}

function appendFlows(flows, test = state.filter) {
  const added = [];
  for (const flow of flows) {
    const existing = indexOf(flow.id);
    if (existing !== undefined) { state.flows[existing] = flow; continue; }
    const index = state.flows.push(flow) - 1;
    state.byId.set(flow.id, index - state.shift);
    if (!test || test(flow)) { state.visible.push(index); added.push(index); }
  }
  return added;
}

/** Older rows (oldest first) in front of the list; returns how many of them the filter shows. */
function prependFlows(older) {
  const fresh = older.filter((flow) => !state.byId.has(flow.id));
  const count = fresh.length;
  if (count === 0) return 0;
  state.flows = fresh.concat(state.flows);
  state.shift += count;
  const test = state.rowFilter;
  const visible = [];
  for (let i = 0; i < count; i++) {
    state.byId.set(fresh[i].id, i - state.shift);
    if (!test || test(fresh[i])) visible.push(i);
  }
  const shown = visible.length;
  for (const index of state.visible) visible.push(index + count);
  state.visible = visible;
  return shown;
}

/** Lets the oldest `count` rows go; returns how many of them the filter showed. */
function trimFlows(count) {
  for (let i = 0; i < count; i++) state.byId.delete(state.flows[i].id);
  state.flows = state.flows.slice(count);
  state.shift -= count;
  let first = 0;
  while (first < state.visible.length && state.visible[first] < count) first++;
  const visible = new Array(state.visible.length - first);
  for (let i = first; i < state.visible.length; i++) visible[i - first] = state.visible[i] - count;
  state.visible = visible;
  state.list.trimmed += count;
  state.list.older = null;
  return first;
}

function refilter() {
  const { flows, rowFilter: filter } = state;
  const visible = [];
  for (let i = 0; i < flows.length; i++) if (!filter || filter(flows[i])) visible.push(i);
  state.visible = visible;
}

function indexNotes() {
  state.notesByFlow = new Map();
  for (const note of state.notes) {
    if (!note.flow) continue;
    const about = state.notesByFlow.get(note.flow);
    if (about) about.push(note); else state.notesByFlow.set(note.flow, [note]);
  }
}

// Live rows past the bound let the oldest go, this many at a time.
const TRIM = 10000;

function reduce(action) {
  switch (action.type) {
    case "status": state.status = action.status; break;
    case "connection": state.connection = action.connection; break;
    case "loadStarted": state.loading = true; break;
    case "flowsLoaded":
      // A fresh read of the session (the newest page of it, or of the server's answer to the
      // filter) replaces the list; flows that came live meanwhile are kept.
      state.flows = [];
      state.byId = new Map();
      state.shift = 0;
      state.visible = [];
      state.list = { ...state.list, query: action.query || "", total: action.total ?? action.flows.length, older: action.older ?? null, trimmed: 0,
        reading: action.older != null };
      state.rowFilter = state.list.query ? parseFilter((action.unapplied || []).join(" ")) : state.filter;
      appendFlows(action.flows, state.rowFilter);
      appendFlows(action.live || []);
      state.loading = false;
      if (state.readFailing) { state.readFailing = false; state.error = null; }
      if (state.selectedId && !state.byId.has(state.selectedId)) { state.selectedId = null; state.detail = null; }
      break;
    case "olderLoaded":
      // `flows` oldest first; the list keeps its place (sequence.js moves the scroll by `shown` rows).
      action.shown = prependFlows(action.flows);
      state.list.older = action.older;
      if (action.older == null) state.list.reading = false;
      break;
    case "olderReading": state.list.reading = action.reading; if (action.raise) state.list.bound = Math.max(state.list.bound, state.flows.length + action.raise); break;
    case "flowArrived":
      if (state.paused) state.held.push(action.flow);
      else {
        // A flow can arrive again, changed (the contract check adds its violations).
        action.replaced = state.byId.has(action.flow.id);
        if (!action.replaced) state.list.total++;
        action.added = appendFlows([action.flow]);
        if (action.replaced && state.filter) refilter();
        if (state.flows.length > state.list.bound + TRIM) action.trimmed = trimFlows(TRIM);
      }
      break;
    case "filterChanged":
      state.filterText = action.text;
      state.filter = parseFilter(action.text);
      // Until the server's answer comes (api.js asks when the page doesn't hold every exchange),
      // the rows held are filtered here.
      state.rowFilter = state.filter;
      refilter();
      // The inspector never shows an exchange the filter hides.
      if (state.selectedId && state.filter) {
        const index = indexOf(state.selectedId);
        if (index === undefined || !state.filter(state.flows[index])) { state.selectedId = null; state.detail = null; action.deselected = true; }
      }
      break;
    case "notesLoaded": {
      // With those that arrived live while the read was under way, each once.
      const read = new Set(action.notes.map((note) => note.id));
      state.notes = action.notes.concat(state.notes.filter((note) => !read.has(note.id) && note.time >= action.since)).sort((a, b) => a.time - b.time);
      indexNotes();
      break;
    }
    case "noteArrived": {
      if (state.notes.some((note) => note.id === action.note.id)) break;
      // Notes arrive in time order but a late one (an import) takes its place among the others.
      let at = state.notes.length;
      while (at > 0 && state.notes[at - 1].time > action.note.time) at--;
      state.notes = [...state.notes.slice(0, at), action.note, ...state.notes.slice(at)];
      indexNotes();
      break;
    }
    case "notesToggled": state.notesOpen = !state.notesOpen; break;
    case "columnResized": state.columns = { ...state.columns, widths: { ...state.columns.widths, [action.column]: action.width } }; saveColumns(); break;
    case "columnToggled": {
      // An optional column (hidden until asked for) is listed in `shown`, any other in `hidden`.
      const key = action.optional ? "shown" : "hidden";
      const names = new Set(state.columns[key]);
      if (names.has(action.column)) names.delete(action.column); else names.add(action.column);
      state.columns = { ...state.columns, [key]: [...names] };
      saveColumns();
      break;
    }
    case "columnsReset": state.columns = { widths: {}, hidden: [], shown: [] }; saveColumns(); break;
    case "menuOpened": state.menu = action.menu; break;
    case "menuClosed": state.menu = null; break;
    case "scenariosLoaded":
      state.scenarios = { document: action.document || state.scenarios.document, error: action.error || null };
      break;
    case "sslLoaded":
      state.ssl = { ...state.ssl, saved: action.document, draft: clone(action.document), dirty: false, saving: false, error: null, loadError: action.error || null };
      break;
    case "sslHostAdded": {
      // From a row's menu, shown in the panel unsaved. Enabling a host changes what it takes for
      // that host to be decrypted and nothing else: it leaves the exclude list (which would win),
      // and joins the include list only when that list names hosts — an empty include list
      // already means every host, and one host in it would stop decrypting all the others.
      const draft = state.ssl.draft;
      const add = (key) => {
        const list = draft[key] || (draft[key] = []);
        if (!list.includes(action.host)) list.push(action.host);
      };
      if (action.list === "include") {
        draft.exclude = (draft.exclude || []).filter((host) => host !== action.host);
        if ((draft.include || []).length > 0) add("include");
      } else {
        // Excluding leaves the include list alone: emptied, it would mean every host.
        add(action.list);
      }
      state.ssl.dirty = true;
      break;
    }
    case "sslChanged": state.ssl.draft[action.list] = action.hosts; state.ssl.dirty = true; break;
    case "sslSaving": state.ssl.saving = true; break;
    case "sslSaveFailed": state.ssl.saving = false; state.ssl.error = action.error; break;
    case "sslReverted": state.ssl.draft = clone(state.ssl.saved); state.ssl.dirty = false; state.ssl.error = null; break;
    case "mapLocalSource": state.mapLocalSources = { ...state.mapLocalSources, [action.index]: action.flowId }; break;
    case "deviceLoaded": state.device = action.device; break;
    case "clientsLoaded": state.clients = action.clients; break;
    case "composeOpened": state.compose = action.draft; break;
    case "composeEdited": state.compose = { ...state.compose, ...action.values }; break;
    case "composeClosed": state.compose = null; break;
    case "pauseToggled":
      state.paused = !state.paused;
      if (!state.paused) {
        state.list.total += state.held.filter((flow) => !state.byId.has(flow.id)).length;
        appendFlows(state.held);
        state.held = [];
        if (state.flows.length > state.list.bound + TRIM) trimFlows(state.flows.length - state.list.bound);
      }
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
      state.flows = []; state.byId = new Map(); state.shift = 0; state.visible = []; state.held = [];
      state.list = { ...state.list, query: "", total: 0, older: null, reading: false, trimmed: 0 };
      state.rowFilter = state.filter;
      state.selectedId = null; state.detail = null;
      state.notes = []; state.notesByFlow = new Map();
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
    case "editorLoading": case "editorLoaded": case "editorChanged": case "editorListEdited": case "editorReverted": case "editorSaving":
    case "editorSaved": case "editorSaveFailed":
      reduceEditor(action);
      break;
    case "heldArrived":
      if (state.heldReleased.includes(action.held.id)) break;
      if (!state.heldExchanges.some((h) => h.id === action.held.id)) {
        state.heldExchanges.push(action.held);
        state.heldDrafts[action.held.id] = heldDraft(action.held);
      }
      // A scenario's loading hold (it has a reason) waits in the lists, not in the editor.
      if (action.held.reason) break;
      if (!state.heldOpen) state.heldOpen = action.held.id;
      state.heldHidden = false;
      break;
    case "heldSynced": {
      const known = new Set(action.list.map((h) => h.id));
      const before = new Set(state.heldExchanges.map((h) => h.id));
      state.heldExchanges = action.list;
      for (const h of action.list) if (!state.heldDrafts[h.id]) state.heldDrafts[h.id] = heldDraft(h);
      for (const id of Object.keys(state.heldDrafts)) if (!known.has(id)) delete state.heldDrafts[id];
      if (!known.has(state.heldOpen)) state.heldOpen = firstToEdit(action.list);
      if (action.list.some((h) => !h.reason && !before.has(h.id))) state.heldHidden = false;
      break;
    }
    case "heldReleased":
      state.heldReleased.push(action.id);
      if (state.heldReleased.length > RELEASED_KEPT) state.heldReleased.shift();
      state.heldExchanges = state.heldExchanges.filter((h) => h.id !== action.id);
      delete state.heldDrafts[action.id];
      if (state.heldOpen === action.id) state.heldOpen = firstToEdit(state.heldExchanges);
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
    case "heldFailed": state.heldError = { id: action.id, field: action.field, message: action.message }; state.heldShown = null; break;
    case "heldShown": state.heldShown = action.id; break;
    case "repeatOpened": state.repeatTarget = action.flow; break;
    case "error": state.error = action.message; state.notice = null; break;
    // The session could not be read; it is read again (api.js), and a read that succeeds clears this.
    case "readFailed": state.error = action.message; state.notice = null; state.readFailing = true; state.loading = false; break;
    case "notice": state.notice = action.message; state.error = null; break;
    case "bannerClosed": state.notice = null; state.error = null; break;
  }
}
