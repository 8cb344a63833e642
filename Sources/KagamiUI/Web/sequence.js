// The Sequence view: one fixed-height row per exchange, and only the rows in sight exist in the
// page, so 100,000 exchanges scroll like 100. New rows are appended without touching the rest.
import { dispatch, state, subscribe } from "./store.js";
import { el, formatDuration, formatSize, formatTime, statusClass, truncate } from "./format.js";
import { contractBadges } from "./contract.js";

const ROW = 24;
const OVERSCAN = 8;

export function mountSequence({ scroll, spacer, onSelect }) {
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
  }

  function makeRow() {
    const cells = ["time", "method", "status", "host", "path", "type", "size", "duration", "rules"]
      .map((name) => el("span", { className: `c-${name}` }));
    const node = el("div", { className: "row", role: "row" }, ...cells);
    const row = { node, cells, flow: null };
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
    const [time, method, status, host, path, type, size, duration, rules] = row.cells;
    time.textContent = formatTime(flow.time);
    method.textContent = flow.method;
    status.textContent = flow.status ?? (flow.error ? "failed" : "…");
    status.className = `c-status ${statusClass(flow.status)}`;
    host.textContent = flow.port && !defaultPort(flow) ? `${flow.host}:${flow.port}` : flow.host;
    const fullPath = flow.path + (flow.query != null ? `?${flow.query}` : "");
    path.textContent = truncate(fullPath, 400);
    path.title = fullPath;
    type.textContent = flow.type || "";
    size.textContent = formatSize(flow.responseSize);
    duration.textContent = formatDuration(flow.duration);
    const names = flow.rules || [];
    rules.replaceChildren(...contractBadges(flow), ...(flow.repeatOf ? [el("span", { className: "badge repeat", title: `Repeat of ${flow.repeatOf}` }, "Repeat")] : []),
      ...names.map((name) => el("span", { className: "badge", title: name }, name)));
    rules.title = names.join("\n");
    row.node.title = flow.error || "";
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

  subscribe((action) => {
    switch (action.type) {
      case "flowArrived":
        // Nothing to redraw unless the new row is in sight or the list follows its tail.
        if (action.replaced) { for (const row of pool) row.flow = null; schedule(); }
        else if (action.added && action.added.length) schedule();
        break;
      case "filterChanged": case "flowsLoaded": case "cleared": case "pauseToggled":
        for (const row of pool) row.flow = null;
        schedule();
        break;
      case "selected": case "viewChanged": case "marked": schedule(); break;
    }
  });
  schedule();
  return { render };
}

function defaultPort(flow) {
  return (flow.scheme === "https" && flow.port === 443) || (flow.scheme === "http" && flow.port === 80);
}
