// The context menu of a Sequence row, a Structure node and the list's header (right-click, or
// the "more" and columns buttons): copy, repeat, compose, and rules made from the exchange, each opening
// its editor prefilled (Charles's "select an exchange, right-click, make the rule from it").
import { dispatch, state, subscribe } from "./store.js";
import { getJSON, loadBody, loadBreakpoints, loadCurl, loadGRPCurl, loadRules, loadSSLProxying, repeatFlow } from "./api.js";
import { el, hostPattern, truncate } from "./format.js";
import { copyText } from "./clipboard.js";
import { responseText } from "./tools.js";
import { COLUMNS, columnShown, flowURL } from "./sequence.js";
import { composeDraft } from "./compose.js";
import { icon } from "./icons.js";

/** The location a rule made from this exchange matches: its scheme, host, port and path. */
export function locationOf(flow) {
  const location = { host: flow.host };
  if (flow.scheme === "https" || flow.scheme === "http") location.protocol = flow.scheme;
  if (flow.port && !((flow.scheme === "https" && flow.port === 443) || (flow.scheme === "http" && flow.port === 80))) location.port = flow.port;
  if (flow.method !== "CONNECT") location.path = flow.path;
  return location;
}

export function mountMenu({ container, showTool, showRepeat, onSelect }) {
  const close = () => dispatch({ type: "menuClosed" });

  function render() {
    const menu = state.menu;
    container.hidden = !menu;
    if (!menu) { container.replaceChildren(); return; }
    const items = menu.columns ? columnItems() : menu.flow ? flowItems(menu.flow) : nodeItems(menu.node);
    container.replaceChildren(...items.map((item) => item === "-" ? el("hr") : el("button", {
      type: "button", role: item.checked != null ? "menuitemcheckbox" : "menuitem", id: item.id, disabled: !!item.disabled, title: item.title || "",
      ...(item.checked != null ? { "aria-checked": String(item.checked) } : {}),
      onclick: () => { if (!item.keepOpen) close(); item.run(); },
    }, item.checked != null ? el("span", { className: "menu-check" }, item.checked ? icon("check") : null) : "", item.label)));
    // Kept inside the window.
    const width = container.offsetWidth, height = container.offsetHeight;
    container.style.left = `${Math.max(4, Math.min(menu.x, innerWidth - width - 4))}px`;
    container.style.top = `${Math.max(4, Math.min(menu.y, innerHeight - height - 4))}px`;
    container.querySelector("button:not(:disabled)")?.focus();
  }

  function columnItems() {
    return [...COLUMNS.map((column) => ({ id: `column-${column.id}`, label: column.label, checked: columnShown(column), keepOpen: true,
      run: () => dispatch({ type: "columnToggled", column: column.id, optional: column.optional === true }) })),
      "-", { id: "columns-reset", label: "Reset columns", run: () => dispatch({ type: "columnsReset" }) }];
  }

  function flowItems(flow) {
    const tunnel = flow.method === "CONNECT";
    const repeatable = !tunnel;
    return [
      { id: "menu-copy-url", label: "Copy URL", run: () => copyText(flowURL(flow), "URL", showTool) },
      { id: "menu-copy-curl", label: "Copy cURL", disabled: tunnel, run: () => loadCurl(flow.id).then((command) => copyText(command, "cURL command", showTool), fail("build the curl command")) },
      ...(flow.grpc ? [{ id: "menu-copy-grpcurl", label: "Copy as grpcurl", run: () => loadGRPCurl(flow.id).then((command) => copyText(command, "grpcurl command", showTool), fail("build the grpcurl command")) }] : []),
      { id: "menu-copy-response", label: "Copy Response", disabled: flow.status == null, run: () => copyResponse(flow) },
      "-",
      { id: "menu-repeat", label: "Repeat", disabled: !repeatable, run: () => repeatOnce(flow) },
      { id: "menu-repeat-advanced", label: "Repeat Advanced…", disabled: !repeatable, run: () => detail(flow).then(showRepeat, fail("read the exchange")) },
      { id: "menu-compose", label: "Compose from this…", disabled: tunnel, run: () => composeFrom(flow) },
      "-",
      ...ruleItems(flow, locationOf(flow), flow.mode === "tunnel"),
      "-",
      { id: "menu-ssl-include", label: tunnel ? "Enable SSL Proxying for this host" : "Add host to SSL Proxying include", run: () => addSSLHost("include", hostPattern(flow)) },
      { id: "menu-ssl-exclude", label: "Add host to SSL Proxying exclude", run: () => addSSLHost("exclude", hostPattern(flow)) },
    ];
  }

  function nodeItems(node) {
    const location = { ...node.location };
    return [
      { id: "menu-copy-url", label: "Copy URL", run: () => copyText(node.url, "URL", showTool) },
      "-",
      ...ruleItems(null, location),
      "-",
      { id: "menu-ssl-include", label: "Add host to SSL Proxying include", run: () => addSSLHost("include", node.hostPattern) },
      { id: "menu-ssl-exclude", label: "Add host to SSL Proxying exclude", run: () => addSSLHost("exclude", node.hostPattern) },
    ];
  }

  /** Rules for what the row shows; a tunnel relayed without decrypting has no request for them to act on. */
  function ruleItems(flow, location, relayed = false) {
    const where = `${location.host}${location.path || ""}`;
    const notDecrypted = relayed ? { disabled: true, title: "This tunnel was relayed without decrypting: enable SSL Proxying for the host first" } : {};
    return [
      { id: "menu-map-local", label: "Map Local…", ...notDecrypted, run: () => addRule("mapLocal", { name: `Local ${truncate(where, 60)}`, enabled: true, from: location, local: "" }, flow) },
      { id: "menu-map-remote", label: "Map Remote…", ...notDecrypted, run: () => addRule("mapRemote", { name: `Remote ${truncate(where, 60)}`, enabled: true, from: location, to: {}, preserveHost: false }) },
      { id: "menu-breakpoint", label: "Breakpoint here", ...notDecrypted, run: () => addBreakpoint(location) },
      { id: "menu-block-host", label: "Block host", run: () => addRule("blockList", { name: `Block ${location.host}`, enabled: true, locations: [{ host: location.host }], action: "403" }) },
    ];
  }

  const fail = (what) => (error) => dispatch({ type: "error", message: `Could not ${what}: ${error.message}` });

  function detail(flow) {
    return state.detail?.id === flow.id && state.detail.flow ? Promise.resolve(state.detail.flow) : getJSON(`api/flows/${flow.id}`);
  }

  async function copyResponse(flow) {
    try {
      const full = await detail(flow);
      const bytes = full.response && full.response.body.stored > 0 ? (await loadBody(flow.id, "response")).bytes : null;
      await copyText(responseText(full, bytes), "response", showTool);
    } catch (error) { fail("copy the response")(error); }
  }

  async function repeatOnce(flow) {
    dispatch({ type: "notice", message: `Repeating ${flow.method} ${truncate(flowURL(flow), 120)}…` });
    try {
      const summary = await repeatFlow(flow.id, { count: 1, concurrency: 1, delayMs: 0 });
      dispatch({ type: "notice", message: `Repeat: ${summary.summary}` });
    } catch (error) { fail("repeat")(error); }
  }

  async function composeFrom(flow) {
    try {
      const full = await detail(flow);
      const bytes = full.request.body.stored > 0 ? (await loadBody(flow.id, "request")).bytes : null;
      dispatch({ type: "composeOpened", draft: composeDraft(full, bytes) });
    } catch (error) { fail("read the exchange")(error); }
  }

  /** Adds the rule to the Rules editor's draft and shows it there, unsaved: Save puts it in force. */
  async function addRule(key, rule, flow) {
    if (!state.rules.draft) await loadRules();
    if (!state.rules.draft) return;
    const index = (state.rules.draft[key] || []).length;
    if (key === "mapLocal" && flow) dispatch({ type: "mapLocalSource", flowId: flow.id, index });
    dispatch({ type: "editorListEdited", editor: "rules", edit: { op: "add", path: [key], item: rule } });
    dispatch({ type: "viewChanged", view: "rules" });
    reveal(`${key}[${index}]`);
  }

  async function addBreakpoint(location) {
    if (!state.breakpoints.draft) await loadBreakpoints();
    if (!state.breakpoints.draft) return;
    const index = (state.breakpoints.draft.breakpoints || []).length;
    dispatch({ type: "editorListEdited", editor: "breakpoints", edit: { op: "add", path: ["breakpoints"], item: { location, request: true, response: true, enabled: true } } });
    dispatch({ type: "viewChanged", view: "breakpoints" });
    reveal(`breakpoints[${index}]`);
  }

  async function addSSLHost(list, host) {
    if (!state.ssl.draft) await loadSSLProxying();
    if (!state.ssl.draft) return;
    dispatch({ type: "sslHostAdded", list, host });
    dispatch({ type: "viewChanged", view: "ssl" });
  }

  function reveal(field) {
    requestAnimationFrame(() => {
      const card = document.querySelector(`[data-field="${CSS.escape(field)}"]`);
      if (!card) return;
      card.scrollIntoView({ block: "center" });
      card.classList.add("just-added");
    });
  }

  document.addEventListener("mousedown", (event) => { if (state.menu && !container.contains(event.target)) close(); });
  document.addEventListener("keydown", (event) => { if (state.menu && event.key === "Escape") close(); });
  // Arrow keys move between the items, as in a native menu.
  container.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    event.preventDefault();
    const items = [...container.querySelectorAll("button:not(:disabled)")];
    const at = items.indexOf(document.activeElement);
    items[(at + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length]?.focus();
  });
  window.addEventListener("blur", () => { if (state.menu) close(); });

  subscribe((action) => {
    switch (action.type) {
      case "menuOpened": case "menuClosed": render(); break;
      case "columnToggled": case "columnsReset": if (state.menu?.columns) render(); break;
    }
  });
  return { open: (menu) => dispatch({ type: "menuOpened", menu }) };
}

