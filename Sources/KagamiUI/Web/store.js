// The page's one store: state changes only through dispatched actions, and every view renders
// from that state. Large lists are changed in place (copying 100,000 rows per event would stall
// the page); listeners are told which action ran so they can update only what changed.
import { parseFilter } from "./filter.js";

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
  detail: null, // { id, flow, error }
  inspectorTab: "overview",
  bodyMode: {}, // part -> text | json | hex | image
  error: null,
};

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
      else action.added = appendFlows([action.flow]);
      break;
    case "filterChanged":
      state.filterText = action.text;
      state.filter = parseFilter(action.text);
      refilter();
      break;
    case "pauseToggled":
      state.paused = !state.paused;
      if (!state.paused) { appendFlows(state.held); state.held = []; }
      break;
    case "cleared":
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
    case "error": state.error = action.message; break;
  }
}
