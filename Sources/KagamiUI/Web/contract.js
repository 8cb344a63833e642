// The contract check in the page: a badge on each row with violations, the inspector's Contract
// tab (each violation with the schema excerpt and the offending value highlighted in the body),
// and the Contract view (descriptions in force and their coverage, from GET /api/contract).
import { state, subscribe } from "./store.js";
import { getJSON, loadBody, loadDetail } from "./api.js";
import { el, truncate } from "./format.js";

/** The row badge: "✗ 2" for errors, "! 1" for warnings only; nothing for a clean exchange. */
export function contractBadges(flow) {
  if (!flow.violations) return [];
  const error = flow.contract === "error";
  const label = `${error ? "✗" : "!"} ${flow.violations}`;
  return [el("span", {
    className: `badge contract ${error ? "contract-error" : "contract-warning"}`,
    title: `${flow.violations} contract violation${flow.violations === 1 ? "" : "s"} (Contract tab)`,
  }, label)];
}

/** The inspector's Contract tab. */
export function contractPanel(flow) {
  const violations = flow.violations || [];
  if (!violations.length) {
    return [el("section", {}, el("h3", {}, "Contract"), el("p", { className: "note", id: "contract-clean" },
      "No violations: the exchange matches the description, or no description covers it."))];
  }
  const bodies = {};
  const items = violations.map((v, index) => {
    const operation = v.operation ? `${v.operation.method} ${v.operation.template}${v.operation.name ? ` (${v.operation.name})` : ""}` : "no operation";
    const facts = [
      ["Operation", operation],
      ["Where", `${v.side} ${v.location}${v.name ? ` ${v.name}` : ""}${v.instancePointer ? ` ${v.instancePointer}` : ""}`],
      v.keyword ? ["Keyword", v.keyword] : null,
      v.expected != null ? ["Expected", v.expected] : null,
      v.actual != null ? ["Actual", v.actual] : null,
      v.schemaPointer ? ["Schema pointer", v.schemaPointer] : null,
    ].filter(Boolean);
    const table = el("table", {}, el("tbody", {}, ...facts.map(([name, value]) => el("tr", {}, el("td", {}, name), el("td", {}, truncate(String(value), 2000))))));
    const parts = [el("p", { className: "contract-message" }, el("span", { className: `severity ${v.severity}` }, v.severity), " ", v.message), table];
    if (v.schemaExcerpt) parts.push(el("div", { className: "note" }, "Schema"), el("pre", { className: "schema-excerpt" }, pretty(v.schemaExcerpt)));
    if (v.location === "body" && v.instancePointer != null && v.kind === "schema") {
      const holder = el("div", { className: "contract-value" }, el("p", { className: "note" }, "Loading the body…"));
      parts.push(el("div", { className: "note" }, "Value in the body"), holder);
      const key = v.side;
      bodies[key] = bodies[key] || (flow[key] && flow[key].body && flow[key].body.stored > 0 ? loadBody(flow.id, key) : Promise.reject(new Error("the body was not kept")));
      bodies[key].then((loaded) => holder.replaceChildren(highlighted(loaded.bytes, v.instancePointer)),
        (error) => holder.replaceChildren(el("p", { className: "note" }, `Can't show the value: ${error.message}`)));
    }
    return el("li", { className: `violation ${v.severity}`, dataset: { index: String(index), kind: v.kind } }, ...parts);
  });
  return [el("section", {}, el("h3", {}, `Contract (${violations.length})`), el("ol", { id: "contract-violations", className: "violations" }, ...items))];
}

function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
}

/** The body as pretty JSON with the value at `pointer` marked. */
function highlighted(bytes, pointer) {
  let document;
  try { document = JSON.parse(new TextDecoder().decode(bytes)); } catch { return el("p", { className: "note" }, "The body is not JSON."); }
  const tokens = pointer === "" ? [] : pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
  const marker = "\u0000KAGAMI-MARK\u0000";
  let target = document, parent = null, last = null;
  for (const token of tokens) {
    if (target == null || typeof target !== "object") { target = undefined; break; }
    parent = target; last = Array.isArray(target) ? Number(token) : token; target = target[last];
  }
  if (target === undefined) return el("pre", { className: "body-text" }, truncate(JSON.stringify(document, null, 2), 20000));
  const original = target;
  if (parent === null) document = marker; else parent[last] = marker;
  const text = JSON.stringify(document, null, 2);
  const at = text.indexOf(JSON.stringify(marker));
  const valueText = JSON.stringify(original, null, 2) ?? "undefined";
  const pre = el("pre", { className: "body-text" });
  if (at < 0) { pre.textContent = text; return pre; }
  pre.append(text.slice(0, at), el("mark", { className: "offending" }, valueText), text.slice(at + JSON.stringify(marker).length));
  return pre;
}

/** The Contract view: every description in force with its coverage; refreshed while shown. */
export function mountContractView({ container }) {
  let timer = 0;
  let loading = false;

  async function refresh() {
    if (loading || container.hidden) return;
    loading = true;
    try {
      render(await getJSON("api/contract"));
    } catch (error) {
      container.replaceChildren(el("p", { className: "error-text" }, `Could not read the contract check: ${error.message}`));
    } finally {
      loading = false;
    }
  }

  function render(answer) {
    const descriptions = answer.descriptions || [];
    if (!descriptions.length) {
      container.replaceChildren(el("section", {}, el("h2", {}, "Contract"),
        el("p", { className: "note", id: "contract-none" }, "No description is checked. Start the proxy with --contract FILE (or FILE=BASEURL).")));
      return;
    }
    container.replaceChildren(el("section", { id: "contract-coverage" }, el("h2", {}, "Contract"),
      el("p", { className: "note" }, `${answer.checked} exchange${answer.checked === 1 ? "" : "s"} checked${answer.skipped ? `, ${answer.skipped} skipped (the check fell behind)` : ""}.`),
      ...descriptions.map(describe)));
  }

  function describe(d) {
    const c = d.coverage;
    const percent = (seen, all) => (all ? `${seen}/${all} (${Math.round((seen / all) * 100)}%)` : "0/0");
    const rows = c.details.map((o) => el("tr", { className: o.exchanges ? "seen" : "unseen" },
      el("td", {}, `${o.method} ${o.template}`), el("td", {}, o.name || ""), el("td", {}, o.line != null ? `${d.path.split("/").pop()}:${o.line}` : ""),
      el("td", {}, String(o.exchanges)), el("td", {}, String(o.violations)),
      el("td", {}, o.statuses.map((s) => `${s.status}${s.exchanges ? "" : " (unseen)"}`).join(", ")),
      el("td", { title: o.properties.unseen.join("\n") }, `${o.properties.seen}/${o.properties.documented}`)));
    return el("div", { className: "contract-description", dataset: { path: d.path } },
      el("h3", {}, `${d.name || d.path} — ${d.path}`),
      d.reloadErrors.length ? el("pre", { className: "error-text reload-errors" }, `The file has errors; the last good version is in force:\n${d.reloadErrors.join("\n")}`) : "",
      el("p", {}, `Base URL: ${d.baseURLs.length ? d.baseURLs.join(", ") : "any host"} · Operations ${percent(c.operations.seen, c.operations.documented)} · Statuses ${percent(c.statuses.seen, c.statuses.documented)} · Response properties ${percent(c.properties.seen, c.properties.documented)} · Undocumented exchanges ${c.undocumentedExchanges}`),
      el("table", { className: "coverage" },
        el("thead", {}, el("tr", {}, ...["Operation", "Name", "Where", "Exchanges", "Violations", "Statuses", "Properties"].map((h) => el("th", {}, h)))),
        el("tbody", {}, ...rows)));
  }

  subscribe((action) => {
    if (action.type === "viewChanged") {
      container.hidden = state.view !== "contract";
      refresh();
    } else if (action.type === "flowArrived" && !container.hidden) {
      clearTimeout(timer);
      timer = setTimeout(refresh, 500);
    }
    // A flow the check found violations in arrives again: refresh the inspector when it shows it.
    if (action.type === "flowArrived" && action.replaced && state.detail && state.detail.id === action.flow.id) loadDetail(action.flow.id);
  });
  container.hidden = state.view !== "contract";
}
