// The Structure view: scheme+host, then each path segment, with the number of exchanges under
// each node. Built incrementally as flows arrive; only opened nodes have their children drawn.
import { state, subscribe } from "./store.js";
import { authority, el, formatTime, hostPattern, statusClass, truncate } from "./format.js";
import { icon } from "./icons.js";

function makeNode(key, label) {
  return { key, label, count: 0, children: new Map(), flows: [] };
}

export function mountStructure({ container, onSelect, onMenu }) {
  let root = makeNode("", "");
  const open = new Set();
  let frame = 0;
  let stale = false; // rows were put in front of the list or let go: rebuilt when next drawn

  function add(index) {
    const flow = state.flows[index];
    const origin = `${flow.scheme}://${authority(flow.host, flow.port && !isDefault(flow) ? flow.port : null, true)}`;
    let node = child(root, origin, origin);
    node.count++;
    const segments = flow.method === "CONNECT" ? [] : flow.path.split("/").filter(Boolean);
    for (const segment of segments) {
      node = child(node, `${node.key}/${segment}`, segment);
      node.count++;
    }
    node.flows.push(index);
  }

  function child(node, key, label) {
    let next = node.children.get(label);
    if (!next) { next = makeNode(key, label); node.children.set(label, next); }
    return next;
  }

  function rebuild() {
    root = makeNode("", "");
    for (const index of state.visible) add(index);
  }

  function schedule() {
    if (!frame && state.view === "structure") frame = requestAnimationFrame(render);
  }

  function render() {
    frame = 0;
    if (stale) { stale = false; rebuild(); }
    const scrollTop = container.scrollTop;
    container.replaceChildren(...[...root.children.values()].map(renderNode));
    if (root.children.size === 0) container.append(el("p", { className: "note" }, "No exchanges match."));
    container.scrollTop = scrollTop;
  }

  function renderNode(node) {
    const details = el("details", { dataset: { key: node.key } });
    const summary = el("summary", {}, el("span", { className: "label" }, truncate(node.label, 120)), " ", el("span", { className: "count" }, `(${node.count})`));
    details.append(summary);
    const nodeMenu = (event, x, y) => {
      event.preventDefault();
      event.stopPropagation();
      const flow = state.flows[firstFlow(node)];
      if (!flow) return;
      const origin = `${flow.scheme}://${authority(flow.host, flow.port && !isDefault(flow) ? flow.port : null, true)}`;
      const location = { host: flow.host };
      if (flow.scheme === "http" || flow.scheme === "https") location.protocol = flow.scheme;
      if (flow.port && !isDefault(flow)) location.port = flow.port;
      // A path node stands for everything under it.
      const segments = node.key.startsWith(origin) ? node.key.slice(origin.length) : "";
      if (segments) location.path = node.flows.length && node.children.size === 0 ? segments : `${segments}/*`;
      onMenu({ x, y, node: { url: origin + (segments || "/"), location, hostPattern: hostPattern(flow) } });
    };
    summary.addEventListener("contextmenu", (event) => nodeMenu(event, event.clientX, event.clientY));
    summary.append(el("button", { className: "node-menu", title: "Actions on this node", "aria-label": "Actions", onclick: (event) => { const r = event.currentTarget.getBoundingClientRect(); nodeMenu(event, r.left, r.bottom); } }, icon("more")));
    const fill = () => {
      for (const next of node.children.values()) details.append(renderNode(next));
      for (const index of node.flows.slice(-500)) {
        const flow = state.flows[index];
        const query = flow.query != null ? `?${flow.query}` : "";
        const leaf = el("div", { className: `leaf${flow.id === state.selectedId ? " selected" : ""}`, dataset: { id: flow.id }, title: flow.path + query, onclick: () => onSelect(flow.id),
          oncontextmenu: (event) => { event.preventDefault(); onSelect(flow.id); onMenu({ x: event.clientX, y: event.clientY, flow }); } },
          el("span", { className: statusClass(flow.status) }, String(flow.status ?? "failed")), ` ${flow.method} `,
          truncate(`${flow.path.split("/").pop() || "/"}${query}`, 120), " ", el("span", { className: "count" }, formatTime(flow.time)));
        details.append(leaf);
      }
    };
    if (open.has(node.key)) { details.open = true; fill(); }
    details.addEventListener("toggle", () => {
      if (details.open) { open.add(node.key); if (details.children.length === 1) fill(); }
      else open.delete(node.key);
    });
    return details;
  }

  subscribe((action) => {
    switch (action.type) {
      case "flowArrived":
        if (action.trimmed !== undefined) stale = true;
        else if (!stale) for (const index of action.added || []) add(index);
        schedule();
        break;
      // Rebuilt when next drawn, not while another view shows 100,000 rows.
      case "olderLoaded": stale = true; schedule(); break;
      case "filterChanged": case "flowsLoaded": case "cleared": case "pauseToggled":
        stale = true; schedule(); break;
      case "viewChanged": case "selected": schedule(); break;
    }
  });
}

/** An exchange under the node, for its scheme, host and port. */
function firstFlow(node) {
  if (node.flows.length) return node.flows[0];
  for (const child of node.children.values()) { const found = firstFlow(child); if (found !== undefined) return found; }
  return undefined;
}

function isDefault(flow) {
  return (flow.scheme === "https" && flow.port === 443) || (flow.scheme === "http" && flow.port === 80);
}
