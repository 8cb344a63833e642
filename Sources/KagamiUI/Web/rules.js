// The Rules view: an editor for every tool of the rules document (docs/RULES.md), edited as a
// draft in the store and saved whole through PUT /api/rules; the server's validation error is
// shown next to the field it names.
import { dispatch, state, subscribe } from "./store.js";
import { loadRules, saveResponseBody } from "./api.js";
import { el } from "./format.js";
import { editorActions, editorHead, editorPlaceholder, field, fieldName, getPath, listControls, locationFields, locationList, redrawsEditor, showFieldError, showUnsaved } from "./editing.js";


const BLOCK_ACTIONS = [["403", "Answer 403 Forbidden"], ["drop", "Drop the connection"]];

const SECTIONS = [
  { key: "blockList", title: "Block List", noun: "block rule", help: "Matched requests are blocked. Block wins over Allow.", make: () => ({ name: "Block", enabled: true, locations: [{}], action: "403" }) },
  { key: "allowList", title: "Allow List", noun: "allow rule", help: "When any allow rule is on, only matched requests go through; the rest get the first rule's action.", make: () => ({ name: "Allow", enabled: true, locations: [{}], action: "403" }) },
  { key: "mapLocal", title: "Map Local", noun: "Map Local rule", help: "Answer from a local file or directory; a missing file goes to the real server.", make: () => ({ name: "Local", enabled: true, from: {}, local: "" }) },
  { key: "mapRemote", title: "Map Remote", noun: "Map Remote rule", help: "Send matching requests elsewhere; blank destination fields keep the request's own.", make: () => ({ name: "Remote", enabled: true, from: {}, to: {}, preserveHost: false }) },
  { key: "rewrite", title: "Rewrite", noun: "rewrite set", help: "Named sets of rules, run in order on requests and responses.", make: () => ({ name: "Rewrite", enabled: true, locations: [], rules: [] }) },
  { key: "noCaching", title: "No Caching", noun: "No Caching rule", help: "Strip caching headers both ways; no locations means every request.", make: () => ({ name: "No caching", enabled: true, locations: [] }) },
];

export function mountRules({ container }) {
  const { change, edit } = editorActions("rules");

  function render() {
    const rules = state.rules;
    const top = container.scrollTop;
    const placeholder = editorPlaceholder(rules, "rules", loadRules);
    if (placeholder) { container.replaceChildren(placeholder); return; }
    const draft = rules.draft;
    const [head, error] = editorHead("rules", "Rules", rules, { savedNote: "Saved; in force for the next request" });
    const sections = SECTIONS.map((section) => listSection(draft, section, change, edit));
    sections.splice(6, 0, throttlingSection(draft, rules.presets, change, edit));
    container.replaceChildren(...[head, error, ...sections].filter(Boolean));
    if (rules.saveError) showFieldError(container, rules.saveError.field, rules.saveError.message);
    container.scrollTop = top;
  }

  subscribe((action) => {
    if (redrawsEditor(action, "rules")) render();
    switch (action.type) {
      case "editorChanged": if (action.editor === "rules" && !action.rerender) showUnsaved(container, "rules"); break;
      case "viewChanged": if (state.view === "rules" && !state.rules.draft && !state.rules.loading) loadRules(); break;
    }
  });
}

function listSection(draft, { key, title, noun, help, make }, change, edit) {
  const list = draft[key] || [];
  return el("section", { className: "rule-section", id: `rules-${key}` },
    el("div", { className: "section-head" }, el("h3", {}, `${title} (${list.length})`),
      el("button", { id: `add-${key}`, onclick: () => edit({ op: "add", path: [key], item: make() }) }, `Add ${noun}`)),
    el("p", { className: "note" }, help),
    ...list.map((item, index) => {
      const path = [key, index];
      const card = el("div", { className: `card${item.enabled === false ? " off" : ""}`, dataset: { field: fieldName(path) } },
        el("div", { className: "card-head" },
          field("Enabled", draft, [...path, "enabled"], change, { kind: "checkbox", fallback: true, rerender: true }),
          field("Name", draft, [...path, "name"], change, { className: "w-name" }),
          listControls([key], index, list.length, edit, noun)));
      card.append(...cardBody(key, draft, path, change, edit));
      return card;
    }));
}

function cardBody(key, draft, path, change, edit) {
  switch (key) {
    case "blockList": case "allowList":
      return [field(key === "blockList" ? "Action" : "Action for everything else", draft, [...path, "action"], change, { kind: "select", options: BLOCK_ACTIONS, fallback: "403" }),
        locationList("Locations", draft, [...path, "locations"], change, edit, { emptyNote: "No locations." })];
    case "mapLocal":
      return [el("div", { className: "sub-head" }, el("span", {}, "From")), locationFields(draft, [...path, "from"], change),
        field("Local file or directory", draft, [...path, "local"], change, { placeholder: "file.json, or a directory", className: "w-wide" }),
        mapLocalFoldersNote(),
        state.mapLocalSources[path[1]] ? saveSource(draft, path) : null];
    case "mapRemote":
      return [el("div", { className: "sub-head" }, el("span", {}, "From")), locationFields(draft, [...path, "from"], change),
        el("div", { className: "sub-head" }, el("span", {}, "To (blank keeps the original)")), locationFields(draft, [...path, "to"], change),
        field("Preserve the Host header", draft, [...path, "preserveHost"], change, { kind: "checkbox" })];
    case "rewrite": return rewriteBody(draft, path, change, edit);
    case "noCaching": return [locationList("Only for", draft, [...path, "locations"], change, edit)];
  }
  return [];
}

/** Where Map Local's files may be: relative paths start in the first folder. */
function mapLocalFoldersNote() {
  const [base, ...others] = state.rules.mapLocalFolders || [];
  if (!base) return null;
  const rest = others.length ? `; also ${others.join(", ")}` : "";
  return el("div", { className: "note map-local-folders" }, `Files are read from and saved in ${base}${rest} (relative paths start there).`);
}

/** Map Local made from an exchange: its response body can become the local file. */
function saveSource(draft, path) {
  const flowId = state.mapLocalSources[path[1]];
  const outcome = el("span", { className: "note map-local-outcome" });
  const button = el("button", { type: "button", className: "map-local-save", title: "Write the response this rule was made from into the file above, so the rule answers with it" },
    "Save the exchange's response body as this file");
  button.addEventListener("click", async () => {
    const file = (getPath(draft, [...path, "local"]) || "").trim();
    if (!file) { outcome.textContent = "Type the file's path first."; return; }
    outcome.textContent = "Saving…";
    try {
      let saved;
      try { saved = await saveResponseBody(flowId, file); } catch (error) {
        if (!/exists/.test(error.message) || !confirm(`${file} exists. Replace it?`)) throw error;
        saved = await saveResponseBody(flowId, file, true);
      }
      outcome.textContent = `Saved ${saved.size} bytes to ${saved.path}.`;
    } catch (error) { outcome.textContent = error.message; outcome.className = "error-text map-local-outcome"; }
  });
  return el("div", { className: "row-fields" }, button, outcome);
}

function rewriteBody(draft, path, change, edit) {
  const types = state.rules.rewriteTypes;
  const rules = getPath(draft, [...path, "rules"]) || [];
  const rulesPath = [...path, "rules"];
  return [
    locationList("Locations", draft, [...path, "locations"], change, edit),
    el("div", { className: "sub-head" }, el("span", {}, `Rules (${rules.length})`),
      el("button", { className: "add-rewrite-rule", onclick: () => edit({ op: "add", path: rulesPath, item: { type: "Add Header", enabled: true, where: "request", match: {}, replace: {} } }) }, "Add rule")),
    ...rules.map((rule, index) => {
      const rulePath = [...rulesPath, index];
      const type = rule.type || "Add Header";
      // Which sides the type can act on and which match/replace fields mean something for it,
      // as GET /api/rules/schema says.
      const kind = types.find((t) => t.type === type) || { where: ["request", "response", "both"], named: false, match: true, replace: true };
      const sides = kind.where;
      const named = kind.named;
      return el("div", { className: `rewrite-rule${rule.enabled === false ? " off" : ""}`, dataset: { field: fieldName(rulePath) } },
        el("div", { className: "row-fields" },
          field("On", draft, [...rulePath, "enabled"], change, { kind: "checkbox", fallback: true, rerender: true }),
          field("Type", draft, [...rulePath, "type"], change, { kind: "select", options: types.map((t) => [t.type, t.type]), rerender: true }),
          field("Where", draft, [...rulePath, "where"], change, { kind: "select", options: sides.map((s) => [s, s]), fallback: sides[0] }),
          listControls(rulesPath, index, rules.length, edit, "rule")),
        !kind.match ? null : el("div", { className: "row-fields" },
          named ? field("Match name", draft, [...rulePath, "match", "name"], change, { placeholder: "any" }) : null,
          field("Match value", draft, [...rulePath, "match", "value"], change, { placeholder: "any", className: "w-grow" }),
          field("Regex", draft, [...rulePath, "match", "regex"], change, { kind: "checkbox" }),
          field("Whole value", draft, [...rulePath, "match", "wholeValue"], change, { kind: "checkbox" })),
        !kind.replace ? null : el("div", { className: "row-fields" },
          named ? field("Replace name", draft, [...rulePath, "replace", "name"], change, { placeholder: "keep" }) : null,
          field(type === "Body" ? "Replace with" : "Replace value", draft, [...rulePath, "replace", "value"], change, { placeholder: "keep", className: "w-grow" }),
          field("Replace all", draft, [...rulePath, "replaceAll"], change, { kind: "checkbox" })));
    }),
  ];
}

function throttlingSection(draft, presets, change, edit) {
  const settings = draft.throttling || {};
  const path = ["throttling"];
  const names = presets.map((p) => p.name);
  const profile = settings.profile && !settings.preset ? settings.profile : presets.find((p) => p.name === settings.preset);
  const options = [["", settings.profile ? `Custom profile: ${settings.profile.name || "unnamed"}` : "Choose a preset…"],
    ...names.map((n) => [n, presets.find((p) => p.name === n)?.builtIn === false ? `${n} (custom)` : n])];
  return el("section", { className: "rule-section", id: "rules-throttling" },
    el("div", { className: "section-head" }, el("h3", {}, "Throttling")),
    el("p", { className: "note" }, "Slow the network down like a real link, for every request or only some."),
    el("div", { className: `card${settings.enabled ? "" : " off"}`, dataset: { field: "throttling" } },
      el("div", { className: "card-head" },
        field("Enabled", draft, [...path, "enabled"], change, { kind: "checkbox", rerender: true }),
        // A preset replaces a profile given in place (the document holds one or the other).
        field("Preset", draft, [...path, "preset"], (p, value) => { change(["throttling", "profile"], undefined); change(p, value, true); },
          { kind: "select", options, className: "w-preset" })),
      profile ? profileTable(profile) : el("p", { className: "note" }, "No preset chosen."),
      locationList("Only for", draft, [...path, "onlyFor"], change, edit),
      customPresets(draft, change, edit)));
}

/** Presets of the user's own, next to the built-in ones (which can't be changed). */
function customPresets(draft, change, edit) {
  const path = ["throttling", "presets"];
  const list = getPath(draft, path) || [];
  const number = (label, key, placeholder) => (i) => field(label, draft, [...path, i, ...key], change, { kind: "number", placeholder, className: "w-number" });
  const columns = [number("Down kbps", ["downloadKbps"], "0: no limit"), number("Up kbps", ["uploadKbps"], "0: no limit"),
    number("Utilisation %", ["utilisation"], "100"), number("Latency ms", ["latencyMs"], "0"), number("MTU bytes", ["mtu"], "1500"),
    number("Reliability %", ["reliability"], "100"), number("Stability %", ["stability"], "100"),
    number("Unstable low %", ["unstableQuality", "low"], "100"), number("Unstable high %", ["unstableQuality", "high"], "100")];
  return el("div", { className: "locations", dataset: { field: fieldName(path) } },
    el("div", { className: "sub-head" }, el("span", {}, `Custom presets (${list.length})`),
      el("button", { type: "button", id: "add-preset", onclick: () => edit({ op: "add", path, item: { name: `My network ${list.length + 1}`, downloadKbps: 1000, uploadKbps: 500, latencyMs: 100 } }) }, "Add preset")),
    list.length ? el("p", { className: "note" }, "Saved presets join the picker above.") : null,
    ...list.map((_, i) => el("div", { className: "preset-row", dataset: { field: fieldName([...path, i]) } },
      field("Name", draft, [...path, i, "name"], change, { className: "w-host" }),
      ...columns.map((column) => column(i)),
      listControls(path, i, list.length, edit, "preset"))));
}

function profileTable(profile) {
  const kbps = (v) => (v === 0 ? "no limit" : `${v} kbps`);
  const rows = [["Download", kbps(profile.downloadKbps)], ["Upload", kbps(profile.uploadKbps)], ["Utilisation", `${profile.utilisation ?? 100}%`],
    ["Round-trip latency", `${profile.latencyMs ?? 0} ms`], ["MTU", `${profile.mtu ?? 1500} bytes`], ["Reliability", `${profile.reliability ?? 100}%`],
    ["Stability", `${profile.stability ?? 100}%`],
    ["Unstable quality", `${profile.unstableQuality?.low ?? 100}–${profile.unstableQuality?.high ?? 100}%`]];
  return el("table", { className: "profile", id: "throttle-profile" },
    el("tbody", {}, ...rows.map(([name, value]) => el("tr", {}, el("td", {}, name), el("td", {}, value)))));
}
