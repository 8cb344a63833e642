// The Rules and Breakpoints editors' shared parts: a document edited as a draft in the store
// (`state.rules`, `state.breakpoints`) and saved whole, its panel head with Revert and Save,
// labelled inputs bound to a path in the draft, location fields, list controls, and server
// errors shown next to their field.
import { el } from "./format.js";
import { dispatch } from "./store.js";
import { saveEditor } from "./api.js";

/** Edits of editor `name`'s draft as store actions: `change(path, value, rerender)` and `edit(listEdit)`. */
export function editorActions(name) {
  return {
    change: (path, value, rerender) => dispatch({ type: "editorChanged", editor: name, path, value, rerender }),
    edit: (listEdit) => dispatch({ type: "editorListEdited", editor: name, edit: listEdit }),
  };
}

/**
 * The editor's panel while its document is not there: loading, or why it could not be read
 * with Try again; null once there is a draft.
 */
export function editorPlaceholder(doc, noun, load) {
  if (doc.draft) return null;
  return el("div", { className: "panel-note" },
    doc.loadError ? el("p", { className: "error-text" }, doc.loadError) : el("p", { className: "note" }, `Loading ${noun}…`),
    doc.loadError ? el("button", { onclick: () => load() }, "Try again") : null);
}

/**
 * The editor's head (title, `NAME-state`, Revert and Save as `NAME-revert`, `NAME-save`) and
 * the server's refusal of the last save (`NAME-error`), or null.
 */
export function editorHead(name, title, doc, { savedNote = "In force" } = {}) {
  const head = el("div", { className: "panel-head" },
    el("h2", {}, title),
    el("span", { id: `${name}-state`, className: "note" }, doc.saving ? "Saving…" : doc.dirty ? "Unsaved changes" : doc.savedAt ? savedNote : "In force"),
    el("span", { className: "spacer-flex" }),
    el("button", { id: `${name}-revert`, disabled: !doc.dirty || doc.saving, onclick: () => dispatch({ type: "editorReverted", editor: name }) }, "Revert"),
    el("button", { id: `${name}-save`, className: "primary", disabled: !doc.dirty || doc.saving, onclick: () => saveEditor(name) }, "Save"));
  const error = doc.saveError ? el("div", { id: `${name}-error`, className: "panel-error", role: "alert" }, doc.saveError.error) : null;
  return [head, error];
}

/** After an edit drawn in place: the head says so and Revert and Save come on. */
export function showUnsaved(container, name) {
  const note = container.querySelector(`#${name}-state`);
  if (note) note.textContent = "Unsaved changes";
  for (const button of container.querySelectorAll(`#${name}-save, #${name}-revert`)) button.disabled = false;
}

/** Whether `action` changes editor `name`'s document so its panel is drawn again. */
export function redrawsEditor(action, name) {
  if (action.editor !== name) return false;
  return action.type === "editorChanged" ? Boolean(action.rerender) : action.type.startsWith("editor");
}

/** `["rewrite", 0, "rules", 2, "type"]` → `rewrite[0].rules[2].type`, the server's field names. */
export function fieldName(path) {
  return path.map((part, i) => (typeof part === "number" ? `[${part}]` : `${i ? "." : ""}${part}`)).join("");
}

export function getPath(object, path) {
  return path.reduce((value, key) => (value == null ? undefined : value[key]), object);
}

/** A blank or undefined value removes the member, so the document keeps only what was set. */
export function setPath(object, path, value) {
  let target = object;
  for (let i = 0; i < path.length - 1; i++) {
    if (target[path[i]] == null) target[path[i]] = typeof path[i + 1] === "number" ? [] : {};
    target = target[path[i]];
  }
  const last = path[path.length - 1];
  if (value === undefined || value === "") {
    if (Array.isArray(target)) target[last] = value ?? "";
    else delete target[last];
  } else target[last] = value;
}

let uid = 0;

/**
 * A labelled field bound to `path`; `change(path, value, rerender)` reports edits.
 * kind: text | number | checkbox | select (options: [[value, label]]) | textarea.
 */
export function field(label, draft, path, change, { kind = "text", options = [], placeholder = "", rerender = false, className = "", fallback, name = fieldName(path) } = {}) {
  const id = `f${++uid}`;
  const current = getPath(draft, path);
  let input;
  if (kind === "checkbox") {
    input = el("input", { type: "checkbox", id, checked: current ?? fallback ?? false });
    input.addEventListener("change", () => change(path, input.checked, rerender));
    return el("label", { className: `field check ${className}`, dataset: { field: name } }, input, label);
  }
  if (kind === "select") {
    input = el("select", { id }, ...options.map(([value, text]) => el("option", { value, selected: String(current ?? fallback ?? "") === String(value) }, text)));
    input.addEventListener("change", () => change(path, input.value === "" && fallback === undefined ? undefined : input.value, rerender));
  } else if (kind === "textarea") {
    input = el("textarea", { id, value: current ?? "", placeholder, spellcheck: false });
    input.addEventListener("input", () => change(path, input.value, rerender));
  } else {
    input = el("input", { id, type: "text", inputMode: kind === "number" ? "numeric" : "text", value: current ?? "", placeholder, spellcheck: false, autocomplete: "off" });
    input.addEventListener("input", () => {
      const text = input.value.trim();
      // A number field that doesn't hold a number is sent as typed, so the server names the problem.
      const value = kind === "number" ? (text === "" ? undefined : (/^-?\d+(\.\d+)?$/.test(text) ? Number(text) : input.value)) : input.value;
      change(path, value, rerender);
    });
  }
  return el("label", { className: `field ${className}`, dataset: { field: name } }, el("span", { className: "field-label" }, label), input);
}

/** Protocol, host, port, path and query of a location; blank fields match anything. */
export function locationFields(draft, path, change) {
  return el("div", { className: "location", dataset: { field: fieldName(path) } },
    field("Protocol", draft, [...path, "protocol"], change, { kind: "select", options: [["", "any"], ["http", "http"], ["https", "https"]], className: "w-protocol" }),
    field("Host", draft, [...path, "host"], change, { placeholder: "*.example.com", className: "w-host" }),
    field("Port", draft, [...path, "port"], change, { kind: "number", placeholder: "any", className: "w-port" }),
    field("Path", draft, [...path, "path"], change, { placeholder: "/api/*", className: "w-path" }),
    field("Query", draft, [...path, "query"], change, { placeholder: "any", className: "w-query" }));
}

/** Move up, move down, delete: buttons for item `index` of the list at `path`. */
export function listControls(path, index, length, edit, noun) {
  return el("span", { className: "list-controls" },
    el("button", { type: "button", disabled: index === 0, title: `Move this ${noun} up`, onclick: () => edit({ op: "up", path, index }) }, "Up"),
    el("button", { type: "button", disabled: index === length - 1, title: `Move this ${noun} down`, onclick: () => edit({ op: "down", path, index }) }, "Down"),
    el("button", { type: "button", className: "danger", title: `Delete this ${noun}`, onclick: () => edit({ op: "remove", path, index }) }, "Delete"));
}

/** Applies a list edit (add, remove, up, down) to the draft. */
export function applyListEdit(draft, { op, path, index, item }) {
  let list = getPath(draft, path);
  if (!Array.isArray(list)) { list = []; setPath(draft, path, list); }
  switch (op) {
    case "add": list.push(item); break;
    case "remove": list.splice(index, 1); break;
    case "up": if (index > 0) [list[index - 1], list[index]] = [list[index], list[index - 1]]; break;
    case "down": if (index < list.length - 1) [list[index + 1], list[index]] = [list[index], list[index + 1]]; break;
  }
}

/** A list of locations with add and remove. */
export function locationList(title, draft, path, change, edit, { emptyNote = "No locations: every request." } = {}) {
  const list = getPath(draft, path) || [];
  return el("div", { className: "locations", dataset: { field: fieldName(path) } },
    el("div", { className: "sub-head" }, el("span", {}, title),
      el("button", { type: "button", onclick: () => edit({ op: "add", path, item: {} }) }, "Add location")),
    list.length === 0 ? el("p", { className: "note" }, emptyNote) : null,
    ...list.map((_, i) => el("div", { className: "location-row" }, locationFields(draft, [...path, i], change),
      el("button", { type: "button", className: "danger", title: "Remove this location", onclick: () => edit({ op: "remove", path, index: i }) }, "Remove"))));
}

/**
 * Shows a server error next to the field it names (the closest field that exists: an error in
 * `rewrite[0].rules[2].match.value` lands on that input, or on its rule when the input is gone).
 */
export function showFieldError(container, field, message) {
  for (const old of container.querySelectorAll(".field-error")) old.remove();
  for (const old of container.querySelectorAll("[aria-invalid]")) old.removeAttribute("aria-invalid");
  if (!field) return null;
  let name = field;
  let target = null;
  while (name && !(target = container.querySelector(`[data-field="${CSS.escape(name)}"]`))) {
    const shorter = name.replace(/(\.[^.[\]]+|\[\d+\])$/, "");
    if (shorter === name) break;
    name = shorter;
  }
  if (!target) return null;
  const note = el("div", { className: "field-error", role: "alert" }, message);
  target.querySelector("input, select, textarea")?.setAttribute("aria-invalid", "true");
  target.after(note);
  target.scrollIntoView({ block: "center" });
  return note;
}
