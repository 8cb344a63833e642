// Compose: write a request (from scratch, or from an exchange) and send it through the proxy,
// so rules and breakpoints act on it; the exchange it makes is selected when it is recorded.
import { dispatch, state, subscribe } from "./store.js";
import { sendComposed } from "./api.js";
import { el } from "./format.js";
import { decodeText } from "./bodies.js";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
const BODY_KINDS = [["none", "No body"], ["text", "Text"], ["json", "JSON"], ["form", "Form"], ["file", "File"]];
// Written afresh for the body sent, so the editor leaves them out.
const FRAMING = new Set(["content-length", "transfer-encoding", "connection", "proxy-connection", "keep-alive"]);

export function blankCompose() {
  return { method: "GET", url: "https://", headersText: "", bodyKind: "none", bodyText: "", formText: "", file: null, from: null, error: null, field: null, sending: false };
}

/** The editor's values for an exchange's request (and its body bytes, when kept). */
export function composeDraft(flow, bytes) {
  const request = flow.request;
  const headers = request.headers.filter(([name]) => !FRAMING.has(name.toLowerCase()));
  const type = (request.body.contentType || "").toLowerCase();
  const text = bytes ? decodeText(bytes) : "";
  let bodyKind = bytes && bytes.length ? "text" : "none";
  let formText = "";
  if (bodyKind === "text" && type.includes("json")) bodyKind = "json";
  else if (bodyKind === "text" && type.startsWith("application/x-www-form-urlencoded")) {
    bodyKind = "form";
    formText = [...new URLSearchParams(text)].map(([name, value]) => `${name}=${value}`).join("\n");
  }
  return { ...blankCompose(), method: request.method, url: flow.url, headersText: headers.map(([n, v]) => `${n}: ${v}`).join("\n"),
    bodyKind, bodyText: bodyKind === "form" ? "" : text, formText, from: flow.id };
}

/** `list` is read-only on an input element: it is set as an attribute. */
function withList(input, id) {
  input.setAttribute("list", id);
  return input;
}

/** The JSON problem in `text`, or null when it parses. */
function jsonProblem(text) {
  if (!text.trim()) return "The body is empty.";
  try { JSON.parse(text); return null; } catch (error) { return error.message; }
}

function headerLines(text) {
  return text.split(/\r?\n/).filter((line) => line.trim()).map((line) => {
    const colon = line.indexOf(":", line.startsWith(":") ? 1 : 0);
    return colon < 0 ? [line.trim(), ""] : [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
  });
}

/** The request as POST /api/compose takes it; the body kind sets Content-Type unless one is given. */
export function composedRequest(draft) {
  const headers = headerLines(draft.headersText);
  const hasType = headers.some(([name]) => name.toLowerCase() === "content-type");
  const request = { method: draft.method, url: draft.url.trim(), headers };
  const type = (value) => { if (!hasType) headers.push(["Content-Type", value]); };
  switch (draft.bodyKind) {
    case "text": request.body = draft.bodyText; type("text/plain; charset=utf-8"); break;
    case "json": request.body = draft.bodyText; type("application/json"); break;
    case "form": {
      const form = new URLSearchParams();
      for (const line of draft.formText.split(/\r?\n/).filter((l) => l.trim())) {
        const equals = line.indexOf("=");
        form.append(equals < 0 ? line.trim() : line.slice(0, equals).trim(), equals < 0 ? "" : line.slice(equals + 1));
      }
      request.body = form.toString();
      type("application/x-www-form-urlencoded");
      break;
    }
    case "file":
      if (draft.file) { request.bodyBase64 = draft.file.base64; type(draft.file.type || "application/octet-stream"); }
      break;
  }
  if (draft.from) request.from = draft.from;
  return request;
}

export function mountCompose({ dialog, onSelect }) {
  const edit = (values) => dispatch({ type: "composeEdited", values });

  async function send() {
    const draft = state.compose;
    if (draft.bodyKind === "json" && jsonProblem(draft.bodyText)) return;
    edit({ sending: true, error: null, field: null });
    try {
      const answer = await sendComposed(composedRequest(draft));
      dispatch({ type: "composeClosed" });
      if (answer.flowId) onSelect(answer.flowId);
      dispatch({ type: "notice", message: answer.error ? `Compose: the request failed: ${answer.error}` : `Compose: ${draft.method} ${draft.url} answered ${answer.status}.` });
    } catch (error) {
      edit({ sending: false, error: error.message, field: error.field || null });
    }
  }

  function render() {
    const draft = state.compose;
    if (!draft) { if (dialog.open) dialog.close(); dialog.replaceChildren(); return; }
    const problem = draft.bodyKind === "json" ? jsonProblem(draft.bodyText) : null;
    const input = (id, value, onInput, props = {}) => el("input", { id, type: "text", value, spellcheck: false, autocomplete: "off", oninput: (e) => onInput(e.target.value), ...props });
    const area = (id, value, onInput, placeholder) => el("textarea", { id, value, spellcheck: false, placeholder, oninput: (e) => onInput(e.target.value) });
    let body = null;
    switch (draft.bodyKind) {
      case "text": body = area("compose-body", draft.bodyText, (v) => edit({ bodyText: v }), "The body, sent as typed"); break;
      case "json":
        body = el("div", {}, area("compose-body", draft.bodyText, (v) => { dispatch({ type: "composeEdited", values: { bodyText: v }, quiet: true }); showJSONProblem(); }, '{"name": "value"}'),
          el("p", { id: "compose-json-state", className: problem ? "error-text" : "note" }, problem ? `Not valid JSON: ${problem}` : "Valid JSON."));
        break;
      case "form": body = area("compose-form", draft.formText, (v) => edit({ formText: v }), "one name=value per line"); break;
      case "file":
        body = el("div", {}, el("input", { id: "compose-file", type: "file", onchange: (e) => readFile(e.target.files[0]) }),
          el("p", { className: "note", id: "compose-file-name" }, draft.file ? `${draft.file.name}, ${draft.file.size} bytes` : "No file chosen."));
        break;
    }
    const form = el("form", { method: "dialog", className: "compose-form", onsubmit: (e) => { e.preventDefault(); send(); } },
      el("h2", {}, draft.from ? "Compose (from an exchange)" : "Compose"),
      el("div", { className: "row-fields" },
        el("label", { className: "field w-method" }, "Method", withList(el("input", { id: "compose-method", type: "text", value: draft.method, oninput: (e) => edit({ method: e.target.value.toUpperCase() }), autocomplete: "off" }), "compose-methods")),
        el("datalist", { id: "compose-methods" }, ...METHODS.map((m) => el("option", { value: m }))),
        el("label", { className: "field w-grow", dataset: { field: "url" } }, "URL", input("compose-url", draft.url, (v) => edit({ url: v }), { placeholder: "https://api.example.com/path" }))),
      el("label", { className: "field", dataset: { field: "headers" } }, "Headers (one Name: value per line; Content-Length is worked out)",
        area("compose-headers", draft.headersText, (v) => edit({ headersText: v }), "Accept: application/json")),
      el("div", { className: "row-fields" }, el("label", { className: "field" }, "Body",
        el("select", { id: "compose-body-kind", onchange: (e) => dispatch({ type: "composeEdited", values: { bodyKind: e.target.value }, rerender: true }) },
          ...BODY_KINDS.map(([value, label]) => el("option", { value, selected: draft.bodyKind === value }, label))))),
      body,
      draft.error ? el("p", { id: "compose-error", className: "error-text", role: "alert" }, draft.error) : null,
      el("menu", {}, el("button", { type: "button", id: "compose-cancel", onclick: () => dispatch({ type: "composeClosed" }) }, "Cancel"),
        el("button", { type: "submit", id: "compose-send", className: "primary", disabled: draft.sending || !!problem }, draft.sending ? "Sending…" : "Send")));
    dialog.replaceChildren(form);
    if (!dialog.open) dialog.showModal();
  }

  // Typing JSON updates the verdict without redrawing the text area (the caret stays).
  function showJSONProblem() {
    const problem = jsonProblem(state.compose.bodyText);
    const note = dialog.querySelector("#compose-json-state");
    note.className = problem ? "error-text" : "note";
    note.textContent = problem ? `Not valid JSON: ${problem}` : "Valid JSON.";
    dialog.querySelector("#compose-send").disabled = !!problem;
  }

  function readFile(file) {
    if (!file) return;
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      edit({ file: { name: file.name, size: file.size, type: file.type, base64: url.slice(url.indexOf(",") + 1) } });
    };
    reader.readAsDataURL(file);
  }

  dialog.addEventListener("cancel", (event) => { event.preventDefault(); dispatch({ type: "composeClosed" }); });
  subscribe((action) => {
    switch (action.type) {
      case "composeOpened": case "composeClosed": render(); break;
      case "composeEdited":
        // Text typed in a field is already on screen; only choices that change the form redraw it.
        if (action.quiet) break;
        if (action.rerender || "sending" in action.values || "error" in action.values || "file" in action.values) render();
        break;
    }
  });
}
