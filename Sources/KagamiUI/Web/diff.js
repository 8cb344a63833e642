// The Diff view: two captures (this session, another session of its folder or store, a filter
// of either, or the exchanges chosen in the list) compared by operation with POST /api/diff,
// each finding opening the exchanges it names side by side, bodies diffed line by line.
import { state, subscribe } from "./store.js";
import { compareCaptures, diffExchange, diffSessions } from "./api.js";
import { el, truncate } from "./format.js";

// Past this many lines a side, bodies are shown without marking the lines that differ.
const MAX_DIFF_LINES = 2000;

export function mountDiff({ container }) {
  let sessions = null; // names, once read
  let last = null; // the last answer, for the side-by-side view's session names

  function side(name, title) {
    const session = el("select", { id: `diff-${name}-session`, title: `The session of the ${name} capture` },
      el("option", { value: "" }, "This session"));
    const filter = el("input", { id: `diff-${name}-filter`, type: "search", placeholder: "Filter words (empty: every exchange)", spellcheck: false, autocomplete: "off" });
    const chosen = el("input", { id: `diff-${name}-chosen`, type: "checkbox", title: "The exchanges chosen in the list (Ctrl/Cmd-click, Shift-click)" });
    const chosenLabel = el("label", { className: "diff-chosen" }, chosen, el("span", { id: `diff-${name}-chosen-count` }, "Chosen exchanges"));
    session.addEventListener("change", () => { if (session.value) chosen.checked = false; renderChoice(); });
    chosen.addEventListener("change", renderChoice);
    const box = el("fieldset", { id: `diff-${name}`, className: "diff-side" }, el("legend", {}, title), session, filter, chosenLabel);
    return { session, filter, chosen, chosenLabel, box };
  }

  const before = side("before", "Before");
  const after = side("after", "After");
  const ignore = el("input", { id: "diff-ignore", type: "text", placeholder: "Ignore: /meta/requestId  x-trace-id", spellcheck: false });
  const run = el("button", { id: "diff-run", type: "submit", className: "primary" }, "Compare");
  const summary = el("p", { id: "diff-summary", className: "note" });
  const error = el("p", { id: "diff-error", className: "panel-error", role: "alert", hidden: true });
  const results = el("div", { id: "diff-results" });
  const compare = el("section", { id: "diff-compare", className: "diff-compare", hidden: true });
  const form = el("form", { id: "diff-form", className: "diff-form", onsubmit: (event) => { event.preventDefault(); start(); } },
    before.box, after.box, el("div", { className: "diff-actions" }, ignore, run));
  container.replaceChildren(
    el("div", { className: "panel-head" }, el("h2", {}, "Diff"),
      el("span", { className: "note" }, "What changed between two captures, by operation: calls, order, statuses, shapes, values, latency.")),
    form, error, summary, results, compare);

  function chosenIds() {
    return state.visible.map((index) => state.flows[index].id).filter((id) => state.marked.has(id));
  }

  function renderChoice() {
    const count = state.marked.size;
    for (const s of [before, after]) {
      // Chosen exchanges are this session's.
      s.chosen.disabled = count === 0 || !!s.session.value;
      if (s.chosen.disabled) s.chosen.checked = false;
      s.chosenLabel.querySelector("span").textContent = `Chosen exchanges (${count})`;
      s.filter.disabled = s.chosen.checked;
    }
  }

  async function loadSessions() {
    try {
      sessions = await diffSessions();
    } catch (failure) {
      sessions = [];
      showError(`Could not list the other sessions: ${failure.message}`);
    }
    for (const s of [before, after]) {
      const chosen = s.session.value;
      s.session.replaceChildren(el("option", { value: "" }, "This session"), ...sessions.map((name) => el("option", { value: name }, name)));
      s.session.value = sessions.includes(chosen) ? chosen : "";
    }
    // The usual question: another session before, this one after.
    if (sessions.length && !before.session.value && !after.session.value) before.session.value = sessions[sessions.length - 1];
    renderChoice();
  }

  function request(s) {
    const part = {};
    if (s.session.value) part.session = s.session.value;
    if (s.chosen.checked) part.ids = chosenIds();
    else if (s.filter.value.trim()) part.filter = s.filter.value.trim();
    return part;
  }

  function showError(message) {
    error.hidden = !message;
    error.textContent = message || "";
  }

  async function start() {
    showError("");
    summary.textContent = "Comparing…";
    results.replaceChildren();
    compare.hidden = true;
    run.disabled = true;
    try {
      last = await compareCaptures({ before: request(before), after: request(after), ignore: ignore.value.split(/\s+/).filter(Boolean) });
      render(last);
    } catch (failure) {
      last = null;
      summary.textContent = "";
      showError(failure.message);
    } finally {
      run.disabled = false;
    }
  }

  function render(answer) {
    const s = answer.summary;
    summary.textContent = `${answer.before.capture} (${answer.before.exchanges} exchanges) → ${answer.after.capture} (${answer.after.exchanges} exchanges): `
      + `${s.operations} operations, ${s.inBoth} in both, ${s.added} added, ${s.removed} removed; ${s.findings} finding${s.findings === 1 ? "" : "s"}.`;
    if (!answer.findings.length) {
      results.replaceChildren(el("p", { id: "diff-none", className: "note" }, "No changes: every operation is called as before."));
      return;
    }
    const byOperation = new Map();
    for (const finding of answer.findings) {
      const key = `${finding.host} ${finding.operation}`;
      if (!byOperation.has(key)) byOperation.set(key, []);
      byOperation.get(key).push(finding);
    }
    const sections = answer.operations.filter((o) => byOperation.has(`${o.host} ${o.operation}`)).map((o) => {
      const findings = byOperation.get(`${o.host} ${o.operation}`);
      const change = o.before === 0 ? "added" : o.after === 0 ? "removed" : "changed";
      const rows = findings.map((finding) => el("tr", {
        className: `diff-finding kind-${finding.kind}`, dataset: { kind: finding.kind, location: finding.location },
      },
      el("td", { className: "diff-kind" }, finding.kind),
      el("td", {}, finding.location),
      el("td", { className: "diff-before" }, truncate(finding.before ?? "—", 300)),
      el("td", { className: "diff-after" }, truncate(finding.after ?? "—", 300)),
      el("td", {}, finding.beforeExchanges.length || finding.afterExchanges.length
        ? el("button", { type: "button", className: "diff-open", onclick: () => open(finding) }, "Side by side") : "")));
      return el("section", { className: `diff-operation ${change}`, dataset: { operation: o.operation, host: o.host } },
        el("h3", {}, el("code", {}, o.operation), o.operationName ? el("span", { className: "note" }, ` ${o.operationName}`) : "",
          el("span", { className: "note" }, `  ${o.host} · ${o.before} → ${o.after} call${o.after === 1 ? "" : "s"}`)),
        el("table", { className: "diff-findings" },
          el("thead", {}, el("tr", {}, ...["Kind", "Where", "Before", "After", ""].map((h) => el("th", {}, h)))),
          el("tbody", {}, ...rows)));
    });
    results.replaceChildren(...sections);
  }

  /** The exchanges a finding names, side by side: request and response, each part diffed. */
  async function open(finding) {
    compare.hidden = false;
    compare.replaceChildren(el("p", { className: "note" }, "Loading the exchanges…"));
    const sessionsOf = last?.sessions || {};
    const load = (id, session) => (id ? diffExchange(id, session).catch((failure) => ({ failure })) : Promise.resolve(null));
    const [left, right] = await Promise.all([load(finding.beforeExchanges[0], sessionsOf.before), load(finding.afterExchanges[0], sessionsOf.after)]);
    const parts = [["Request", (x) => requestText(x), (x) => x.requestText], ["Response", (x) => responseText(x), (x) => x.responseText]];
    const columns = [el("div", { id: "diff-left", className: "diff-column" }), el("div", { id: "diff-right", className: "diff-column" })];
    [left, right].forEach((exchange, index) => {
      const label = index === 0 ? "Before" : "After";
      columns[index].append(el("h4", {}, exchange && !exchange.failure ? `${label}: ${exchange.method} ${truncate(exchange.url, 200)}` : `${label}: ${exchange?.failure ? `could not read the exchange: ${exchange.failure.message}` : "no exchange on this side"}`));
    });
    for (const [title, head, body] of parts) {
      const texts = [left, right].map((x) => (x && !x.failure ? head(x) + (body(x) != null ? `\n\n${body(x)}` : "") : ""));
      const marked = lineDiff(texts[0].split("\n"), texts[1].split("\n"));
      columns.forEach((column, index) => column.append(el("div", { className: "note" }, title), el("pre", { className: "diff-text" }, ...marked[index])));
    }
    compare.replaceChildren(
      el("div", { className: "panel-head" }, el("h3", {}, `${finding.operation} · ${finding.kind} · ${finding.location}`),
        el("button", { type: "button", id: "diff-compare-close", onclick: () => { compare.hidden = true; } }, "Close")),
      el("div", { className: "diff-columns" }, ...columns));
    compare.scrollIntoView({ block: "nearest" });
  }

  subscribe((action) => {
    if (action.type === "viewChanged") {
      container.hidden = state.view !== "diff";
      if (!container.hidden && sessions === null) loadSessions();
      if (!container.hidden) renderChoice();
    } else if (action.type === "marked" && !container.hidden) {
      renderChoice();
    }
  });
  container.hidden = state.view !== "diff";
}

function headerLines(headers) {
  // Sorted, so the same headers line up whatever order each side sent them in.
  return headers.map(([name, value]) => `${name}: ${value}`).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())).join("\n");
}

function requestText(exchange) {
  return `${exchange.request.method} ${exchange.request.target}\n${headerLines(exchange.request.headers)}`;
}

function responseText(exchange) {
  if (!exchange.response) return exchange.error ? `no response: ${exchange.error.message}` : "no response";
  return `${exchange.response.status} ${exchange.response.reason}\n${headerLines(exchange.response.headers)}`;
}

/**
 * Two texts' lines, each side as spans: lines only the left has marked `del`, lines only the
 * right has marked `ins` (a longest common subsequence of lines). Past MAX_DIFF_LINES a side,
 * the lines are shown unmarked.
 */
export function lineDiff(a, b) {
  const line = (text, kind) => el("span", { className: `line ${kind}` }, text === "" ? " " : text);
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) return [a.map((t) => line(t, "same")), b.map((t) => line(t, "same"))];
  const n = a.length, m = b.length;
  const lengths = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[i * (m + 1) + j] = a[i] === b[j] ? lengths[(i + 1) * (m + 1) + j + 1] + 1
        : Math.max(lengths[(i + 1) * (m + 1) + j], lengths[i * (m + 1) + j + 1]);
    }
  }
  const left = [], right = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { left.push(line(a[i++], "same")); right.push(line(b[j++], "same")); }
    else if (lengths[(i + 1) * (m + 1) + j] >= lengths[i * (m + 1) + j + 1]) left.push(line(a[i++], "del"));
    else right.push(line(b[j++], "ins"));
  }
  while (i < n) left.push(line(a[i++], "del"));
  while (j < m) right.push(line(b[j++], "ins"));
  return [left, right];
}
