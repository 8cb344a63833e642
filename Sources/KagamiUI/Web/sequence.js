// The Sequence view: one fixed-height row per exchange, and only the rows in sight exist in the
// page, so 100,000 exchanges scroll like 100. New rows are appended without touching the rest.
import { dispatch, indexOf, state, subscribe } from "./store.js";
import { authority, el, formatDuration, formatSize, formatTime, statusClass, truncate } from "./format.js";
import { contractBadges } from "./contract.js";
import { icon } from "./icons.js";

const ROW = 24;
const OVERSCAN = 8;

// The columns, in order: default width (px; the path takes what is left), the narrowest a drag
// may make it, whether it gives way first when the list is narrow (the inspector is open), and
// whether it is optional (hidden until chosen in the columns menu).
export const COLUMNS = [
  { id: "time", label: "Time", width: 96, min: 60 },
  { id: "method", label: "Method", width: 70, min: 44 },
  { id: "status", label: "Status", width: 60, min: 40 },
  { id: "scheme", label: "Scheme", width: 74, min: 40 },
  { id: "version", label: "Version", width: 76, min: 44, optional: true },
  { id: "host", label: "Host", width: 180, min: 60, shrinks: true },
  { id: "path", label: "Path", width: null, min: 80, shrinks: true },
  { id: "type", label: "Type", width: 130, min: 50, shrinks: true },
  { id: "size", label: "Size", width: 72, min: 44 },
  { id: "duration", label: "Duration", width: 80, min: 50 },
  { id: "rules", label: "Rules", width: 170, min: 50 },
];

/** Whether a column is shown: an optional one when chosen, any other unless hidden. */
export function columnShown({ id, optional }) {
  return optional ? state.columns.shown.includes(id) : !state.columns.hidden.includes(id);
}

/** The CSS that sizes and hides columns as the store says (header and rows alike). */
function columnStyle() {
  const { widths } = state.columns;
  return COLUMNS.map((column) => {
    const { id, width, min, shrinks } = column;
    if (!columnShown(column)) return `#sequence .c-${id} { display: none; }`;
    const chosen = widths[id] ?? width;
    if (chosen == null) return `#sequence .c-${id} { flex: 1 1 0; min-width: ${min}px; }`;
    return `#sequence .c-${id} { flex: 0 ${shrinks && widths[id] == null ? 1 : 0} ${chosen}px; min-width: ${shrinks && widths[id] == null ? min : chosen}px; }`;
  }).join("\n");
}

/** The header: a label per column, a handle to drag its width, and the menu of columns. */
function mountHeader(head, openMenu) {
  const style = el("style", { id: "column-style" });
  document.head.append(style);
  const cells = COLUMNS.map(({ id, label, min }) => {
    const handle = el("span", { className: "col-resize", title: `Drag to resize ${label}`, "aria-hidden": "true" });
    const cell = el("span", { className: `c-${id} head-cell`, dataset: { column: id }, title: label }, el("span", { className: "head-label" }, label), handle);
    handle.addEventListener("mousedown", (event) => {
      event.preventDefault();
      const start = event.clientX, width = cell.getBoundingClientRect().width;
      const move = (e) => dispatch({ type: "columnResized", column: id, width: Math.max(min, Math.round(width + e.clientX - start)) });
      const up = () => { window.removeEventListener("mousemove", move); window.removeEventListener("mouseup", up); };
      window.addEventListener("mousemove", move);
      window.addEventListener("mouseup", up);
    });
    return cell;
  });
  const more = el("button", { id: "columns-button", className: "c-more", title: "Show or hide columns", "aria-label": "Columns", onclick: (event) => openMenu(event) }, icon("menu"));
  head.replaceChildren(...cells, more);
  head.addEventListener("contextmenu", (event) => { event.preventDefault(); openMenu(event); });
  const apply = () => { style.textContent = columnStyle(); };
  apply();
  return apply;
}

export function mountSequence({ scroll, spacer, head, onSelect, onMenu }) {
  const applyColumns = mountHeader(head, (event) => {
    const rect = event.currentTarget.getBoundingClientRect?.() || { left: event.clientX, bottom: event.clientY };
    dispatch({ type: "menuOpened", menu: { x: event.type === "contextmenu" ? event.clientX : rect.left, y: event.type === "contextmenu" ? event.clientY : rect.bottom, columns: true } });
  });
  let pool = [];
  let followTail = true;
  let frame = 0;

  function schedule() {
    if (!frame) frame = requestAnimationFrame(render);
  }

  function render() {
    frame = 0;
    const total = state.visible.length;
    spacer.style.height = `${total * ROW}px`;
    if (followTail) scroll.scrollTop = scroll.scrollHeight;
    const first = Math.max(0, Math.floor(scroll.scrollTop / ROW) - OVERSCAN);
    const last = Math.min(total, Math.ceil((scroll.scrollTop + scroll.clientHeight) / ROW) + OVERSCAN);
    const needed = last - first;
    while (pool.length < needed) {
      const row = makeRow();
      pool.push(row);
      spacer.append(row.node);
    }
    for (let i = 0; i < pool.length; i++) {
      const row = pool[i];
      if (i >= needed) { row.node.hidden = true; row.index = -1; continue; }
      const position = first + i;
      const index = state.visible[position];
      row.node.hidden = false;
      row.node.style.transform = `translateY(${position * ROW}px)`;
      const flow = state.flows[index];
      if (row.flow !== flow) fill(row, flow);
      row.node.classList.toggle("selected", flow.id === state.selectedId);
      row.node.classList.toggle("marked", state.marked.has(flow.id));
      row.node.setAttribute("aria-selected", String(state.marked.has(flow.id)));
      row.node.dataset.position = position;
    }
    // When the newest rows of a freshly read list were first drawn (ms since the page began).
    if (needed > 0 && !state.loading && !window.kagamiTimings?.listShown) {
      window.kagamiTimings = { ...(window.kagamiTimings || {}), listShown: { at: Math.round(performance.now()), rows: total } };
    }
  }

  function makeRow() {
    const cells = COLUMNS.map(({ id }) => el("span", { className: `c-${id}` }));
    const more = el("button", { className: "c-more row-menu", title: "Actions on this exchange", "aria-label": "Actions", tabIndex: -1 }, icon("more"));
    const node = el("div", { className: "row", role: "row" }, ...cells, more);
    const row = { node, cells, flow: null };
    const menu = (event, x, y) => {
      event.preventDefault();
      event.stopPropagation();
      if (!row.flow) return;
      if (!state.marked.has(row.flow.id)) dispatch({ type: "marked", id: row.flow.id, mode: "only" });
      onSelect(row.flow.id);
      onMenu({ x, y, flow: row.flow });
    };
    node.addEventListener("contextmenu", (event) => menu(event, event.clientX, event.clientY));
    more.addEventListener("click", (event) => { const r = more.getBoundingClientRect(); menu(event, r.left, r.bottom); });
    // Shift- and Ctrl-clicks choose rows; they must not select the text under them.
    node.addEventListener("mousedown", (event) => { if (event.shiftKey || event.ctrlKey || event.metaKey) event.preventDefault(); });
    node.addEventListener("click", (event) => {
      if (!row.flow) return;
      // Ctrl/Cmd-click adds or removes a row, Shift-click takes the range from the last one.
      const mode = event.shiftKey ? "range" : (event.ctrlKey || event.metaKey) ? "toggle" : "only";
      if (mode !== "only") event.preventDefault();
      dispatch({ type: "marked", id: row.flow.id, mode });
      onSelect(row.flow.id);
    });
    return row;
  }

  function fill(row, flow) {
    row.flow = flow;
    row.node.dataset.id = flow.id;
    const [time, method, status, scheme, version, host, path, type, size, duration, rules] = row.cells;
    time.textContent = formatTime(flow.time);
    method.textContent = flow.method;
    // A gRPC call that failed is an HTTP 200 whose grpc-status says so: both are shown.
    const grpcFailed = flow.grpcStatus && flow.grpcStatus.code !== 0;
    status.textContent = grpcFailed ? flow.grpcStatus.name : flow.status ?? (flow.error ? "failed" : "…");
    status.className = `c-status ${grpcFailed ? "grpc-failed" : statusClass(flow.status)}`;
    status.title = flow.grpcStatus ? `HTTP ${flow.status}, gRPC ${flow.grpcStatus.name} (${flow.grpcStatus.code})` : "";
    const secure = flow.scheme === "https" || flow.scheme === "wss" || flow.method === "CONNECT";
    scheme.replaceChildren(...(secure ? [icon("lock"), " "] : []), flow.method === "CONNECT" ? "tunnel" : flow.scheme);
    scheme.title = flow.method === "CONNECT" ? (flow.decrypted ? "HTTPS tunnel, decrypted" : "HTTPS tunnel, relayed without decrypting") : secure ? "HTTPS" : "HTTP, not encrypted";
    scheme.classList.toggle("secure", secure);
    version.textContent = flow.version ? flow.version.replace(/^HTTP\//, "").replace(/\.0$/, "") : "";
    version.title = flow.version || "";
    host.textContent = authority(flow.host, flow.port && !defaultPort(flow) ? flow.port : null);
    host.title = host.textContent;
    const fullPath = flow.path + (flow.query != null ? `?${flow.query}` : "");
    path.textContent = truncate(fullPath, 400);
    path.title = flowURL(flow);
    type.textContent = flow.type || "";
    size.textContent = formatSize(flow.responseSize);
    duration.textContent = formatDuration(flow.duration);
    const names = flow.rules || [];
    const notes = state.notesByFlow.get(flow.id);
    rules.replaceChildren(...(notes ? [el("span", { className: "badge note-mark", title: notes.map((note) => `${note.author}: ${note.text}`).join("\n") }, "Note")] : []),
      ...contractBadges(flow), ...(flow.repeatOf ? [state.byId.has(flow.repeatOf) ? el("span", { className: "badge repeat", title: `Repeat of ${flow.repeatOf}` }, "Repeat")
        : el("span", { className: "badge repeat", title: "Written in Compose" }, "Composed")] : []),
      ...names.map((name) => el("span", { className: "badge", title: name }, name)));
    rules.title = names.join("\n");
    row.node.title = `${flow.method} ${flowURL(flow)}${flow.error ? `\n${flow.error}` : ""}`;
  }

  scroll.addEventListener("scroll", () => {
    followTail = scroll.scrollTop + scroll.clientHeight >= scroll.scrollHeight - ROW;
    schedule();
  }, { passive: true });
  new ResizeObserver(schedule).observe(scroll);

  scroll.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    event.preventDefault();
    const position = state.visible.findIndex((i) => state.flows[i].id === state.selectedId);
    const next = Math.max(0, Math.min(state.visible.length - 1, position + (event.key === "ArrowDown" ? 1 : -1)));
    const flow = state.flows[state.visible[next]];
    if (!flow) return;
    dispatch({ type: "marked", id: flow.id, mode: event.shiftKey ? "range" : "only" });
    onSelect(flow.id);
    const top = next * ROW;
    if (top < scroll.scrollTop) scroll.scrollTop = top;
    else if (top + ROW > scroll.scrollTop + scroll.clientHeight) scroll.scrollTop = top + ROW - scroll.clientHeight;
  });

  /** Scrolls the list to the exchange's row, when the list shows it. */
  function reveal(id) {
    const index = indexOf(id);
    const position = index === undefined ? -1 : state.visible.indexOf(index);
    if (position < 0) return;
    const top = position * ROW;
    if (top >= scroll.scrollTop && top + ROW <= scroll.scrollTop + scroll.clientHeight) return;
    followTail = false;
    scroll.scrollTop = Math.max(0, top - Math.floor(scroll.clientHeight / 2));
    schedule();
  }

  /** Rows put in front of the list (or taken from it): the rows in sight stay where they are. */
  function keepPlace(rows) {
    for (const row of pool) row.flow = null;
    if (rows && !followTail) {
      spacer.style.height = `${state.visible.length * ROW}px`;
      scroll.scrollTop = Math.max(0, scroll.scrollTop + rows * ROW);
    }
    schedule();
  }

  subscribe((action) => {
    switch (action.type) {
      case "flowArrived":
        // Nothing to redraw unless the new row is in sight or the list follows its tail.
        if (action.trimmed !== undefined) keepPlace(-action.trimmed);
        else if (action.replaced) { for (const row of pool) row.flow = null; schedule(); }
        else if (action.added && action.added.length) schedule();
        break;
      case "olderLoaded": keepPlace(action.shown); break;
      case "flowsLoaded":
        // A new read (another filter, a reconnect) starts at the newest rows, like the first.
        followTail = true;
        for (const row of pool) row.flow = null;
        schedule();
        break;
      case "filterChanged": case "cleared": case "pauseToggled":
        for (const row of pool) row.flow = null;
        schedule();
        break;
      case "selected": case "viewChanged": case "marked": schedule(); break;
      // The exchanges a note is about carry its badge.
      case "notesLoaded": for (const row of pool) row.flow = null; schedule(); break;
      case "noteArrived":
        if (action.note.flow) { for (const row of pool) if (row.flow?.id === action.note.flow) row.flow = null; schedule(); }
        break;
      case "revealed": reveal(action.id); break;
      case "columnResized": case "columnToggled": case "columnsReset": applyColumns(); break;
    }
  });
  schedule();
  return { render };
}

/** The exchange's full URL from its summary (a tunnel: `host:port`). */
export function flowURL(flow) {
  if (flow.method === "CONNECT") return authority(flow.host, flow.port);
  return `${flow.scheme}://${authority(flow.host, flow.port && !defaultPort(flow) ? flow.port : null, true)}${flow.path}${flow.query != null ? `?${flow.query}` : ""}`;
}

function defaultPort(flow) {
  return (flow.scheme === "https" && flow.port === 443) || (flow.scheme === "http" && flow.port === 80);
}
