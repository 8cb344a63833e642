// Breakpoints: the list of locations that pause exchanges (saved through PUT /api/breakpoints),
// and the editor that pops up when an exchange is held, with Execute, Abort and Cancel. Held
// exchanges queue; the editor shows one at a time and the queue stays in sight. Requests a
// scenario's loading state holds are in the queue too, with a Release button instead.
import { dispatch, state, subscribe } from "./store.js";
import { decideHeld, loadBreakpoints } from "./api.js";
import { el, formatTime, truncate } from "./format.js";
import { loadingHoldRow } from "./scenarios.js";
import { editorActions, editorHead, editorPlaceholder, field, fieldName, listControls, locationFields, redrawsEditor, showFieldError, showUnsaved } from "./editing.js";

export function mountBreakpoints({ container, dialog }) {
  const { change, edit } = editorActions("breakpoints");

  function renderList() {
    const bp = state.breakpoints;
    const top = container.scrollTop;
    const placeholder = editorPlaceholder(bp, "breakpoints", loadBreakpoints);
    if (placeholder) { container.replaceChildren(placeholder); return; }
    const draft = bp.draft;
    const list = draft.breakpoints || [];
    const [head, error] = editorHead("breakpoints", "Breakpoints", bp);
    const settings = el("section", { className: "rule-section" },
      el("div", { className: "section-head" }, el("h3", {}, `Breakpoints (${list.length})`),
        el("button", { id: "add-breakpoint", onclick: () => edit({ op: "add", path: ["breakpoints"], item: { location: {}, request: true, response: false, enabled: true } }) }, "Add breakpoint")),
      el("p", { className: "note" }, "A matching exchange pauses at its request and/or response and opens for editing: Execute sends it on with the edits, Abort fails it, Cancel sends it on unchanged. On a WebSocket, messages going the chosen way (those containing the message text, when given) pause the same way: Send edited, Drop, or Send unchanged."),
      el("div", { className: "card-head" },
        field("Breakpoints on", draft, ["enabled"], change, { kind: "checkbox", fallback: true }),
        field("Continue by itself after (seconds, blank: wait)", draft, ["autoContinue"], change, { kind: "number", placeholder: "wait", className: "w-port-wide" })),
      ...list.map((item, index) => {
        const path = ["breakpoints", index];
        return el("div", { className: `card${item.enabled === false ? " off" : ""}`, dataset: { field: fieldName(path) } },
          el("div", { className: "card-head" },
            field("Name", draft, [...path, "name"], change, { placeholder: "its location, once saved", className: "w-host" }),
            field("Enabled", draft, [...path, "enabled"], change, { kind: "checkbox", fallback: true, rerender: true }),
            field("Request", draft, [...path, "request"], change, { kind: "checkbox", fallback: true }),
            field("Response", draft, [...path, "response"], change, { kind: "checkbox" }),
            field("WebSocket messages", draft, [...path, "messages"], change, {
              kind: "select", options: [["", "none"], ["send", "sent (client → server)"], ["receive", "received (server → client)"], ["both", "both ways"]],
            }),
            field("containing", draft, [...path, "messageText"], change, { placeholder: "any message", className: "w-host" }),
            field("Regex", draft, [...path, "messageRegex"], change, { kind: "checkbox" }),
            el("span", { className: "spacer-flex" }),
            listControls(["breakpoints"], index, list.length, edit, "breakpoint")),
          locationFields(draft, [...path, "location"], change));
      }));
    container.replaceChildren(...[head, error, heldQueue(), settings].filter(Boolean));
    if (bp.saveError) showFieldError(container, bp.saveError.field, bp.saveError.message);
    container.scrollTop = top;
  }

  function heldQueue() {
    const held = state.heldExchanges;
    return el("section", { className: "rule-section", id: "held-queue" },
      el("div", { className: "section-head" }, el("h3", {}, `Held now (${held.length})`)),
      held.length === 0 ? el("p", { className: "note" }, "No exchange is waiting.") : null,
      ...held.map((h) => h.reason ? loadingHoldRow(h) : el("div", { className: "card held-item" },
        el("div", { className: "card-head" }, el("span", { className: "mono" }, `${formatTime(h.heldAt)}  ${h.phase}  ${h.request.method} ${truncate(h.request.url, 160)}`),
          el("span", { className: "spacer-flex" }), el("button", { onclick: () => dispatch({ type: "heldOpened", id: h.id }) }, "Open")))));
  }

  // -- the held exchange editor --
  function renderDialog() {
    const held = state.heldExchanges;
    const current = held.find((h) => h.id === state.heldOpen) || null;
    if (!current || state.heldHidden) {
      if (state.heldShown) dispatch({ type: "heldShown", id: null });
      if (dialog.open) dialog.close();
      return;
    }
    const queue = el("div", { className: "held-queue", id: "held-dialog-queue", role: "list" },
      el("span", { className: "note" }, held.length === 1 ? "1 exchange held" : `${held.length} exchanges held:`),
      ...(held.length > 1 ? held.map((h, i) => el("button", {
        role: "listitem", "aria-pressed": String(h.id === current.id), title: h.request.url,
        onclick: () => dispatch({ type: "heldOpened", id: h.id }),
      }, `${i + 1}. ${h.phase} ${h.request.method} ${truncate(h.request.url.replace(/^https?:\/\//, ""), 40)}`)) : []));
    if (state.heldShown === current.id && dialog.open) {
      dialog.querySelector("#held-dialog-queue").replaceWith(queue);
      return;
    }
    dispatch({ type: "heldShown", id: current.id });
    const draft = state.heldDrafts[current.id];
    const heldChange = (path, value) => dispatch({ type: "heldEdited", id: current.id, path, value });
    const error = state.heldError && state.heldError.id === current.id ? el("div", { className: "panel-error", role: "alert", id: "held-error" }, state.heldError.message) : null;
    if (current.phase === "message") {
      renderMessage(current, draft, heldChange, queue, error);
      return;
    }
    const isRequest = current.phase === "request";
    const part = isRequest ? "request" : "response";
    const base64 = draft[part].bodyEncoding === "base64";
    const fields = isRequest
      ? [el("div", { className: "row-fields" },
          field("Method", draft, ["request", "method"], heldChange, { className: "w-method" }),
          field("URL", draft, ["request", "url"], heldChange, { className: "w-grow" }))]
      : [el("p", { className: "url" }, `${current.request.method} ${current.request.url}`),
        el("div", { className: "row-fields" },
          field("Status", draft, ["response", "status"], heldChange, { kind: "number", className: "w-port" }),
          field("Reason", draft, ["response", "reason"], heldChange, { className: "w-grow" }))];
    showHeld(current, error, [
      el("h2", {}, `Breakpoint: ${isRequest ? "request" : "response"} held`),
      queue,
      el("p", { className: "note" }, `Held at ${formatTime(current.heldAt)} by ${current.locations.join(", ") || "a breakpoint"}.`),
      error,
      ...fields,
      field("Headers (one per line, Name: value)", draft, [part, "headersText"], heldChange, { kind: "textarea", className: "w-wide held-headers", name: `${part}.headers` }),
      ...bodyFields(current[part], part, base64, draft, heldChange),
    ], {
      waits: "the exchange keeps waiting",
      abort: ["Abort", "Fail the exchange: the client gets an error"],
      cancel: ["Cancel", "Send it on unchanged"],
      execute: ["Execute", "Send it on with the edits"],
    });
  }

  /** The body as bytes, or a gRPC call's messages as JSON when a schema has its method. */
  function bodyFields(held, part, base64, draft, heldChange) {
    const grpc = held.grpc;
    if (grpc?.messages) {
      return [
        el("p", { className: "note" }, `gRPC ${grpc.method}: ${part === "request" ? "sent" : "received"} ${grpc.type} messages, written back with the schema${grpc.encoding ? ` and ${grpc.encoding}` : ""}.${grpc.note ? ` ${grpc.note}.` : ""}`),
        field(`Messages (JSON array of ${grpc.type})`, draft, [part, "grpcText"], heldChange, { kind: "textarea", className: "w-wide held-body", name: `${part}.grpc.text` }),
      ];
    }
    return [
      grpc?.problem ? el("p", { className: "note" }, `gRPC: ${grpc.problem}`) : null,
      field(base64 ? "Body (base64: not UTF-8 text)" : "Body", draft, [part, "body"], heldChange, { kind: "textarea", className: "w-wide held-body" }),
    ].filter(Boolean);
  }

  /** The editor's form: `parts`, then Later and the three decisions, named by `menu`. */
  function showHeld(current, error, parts, menu) {
    const decision = (action, className) => el("button", {
      type: "button", id: `held-${action}`, className, title: menu[action][1], onclick: () => decide(current, action),
    }, menu[action][0]);
    dialog.replaceChildren(el("form", { method: "dialog", className: "held-form", onsubmit: (event) => event.preventDefault() },
      ...parts,
      el("menu", {},
        el("button", { type: "button", id: "held-hide", title: `Close this window; ${menu.waits} (see Breakpoints)`, onclick: () => dispatch({ type: "heldHidden" }) }, "Later"),
        el("span", { className: "spacer-flex" }),
        decision("abort", "danger"),
        decision("cancel", ""),
        decision("execute", "primary"))));
    if (!dialog.open) dialog.showModal();
    if (error) showFieldError(dialog, state.heldError.field, state.heldError.message);
  }

  /** A held WebSocket message: its payload to edit, then send, drop or send unchanged. */
  function renderMessage(current, draft, heldChange, queue, error) {
    const message = draft.message || {};
    const toServer = message.direction === "send";
    const binary = message.base64 != null;
    showHeld(current, error, [
      el("h2", {}, "Breakpoint: WebSocket message held"),
      queue,
      el("p", { className: "url" }, `${toServer ? "↑ client → server" : "↓ server → client"} on ${current.request.url}`),
      el("p", { className: "note" }, `Held at ${formatTime(current.heldAt)} by ${current.locations.join(", ") || "a breakpoint"}; what the ${toServer ? "client" : "server"} sends next waits behind it.${message.note ? ` ${message.note}.` : ""}`),
      error,
      field(binary ? "Binary message (base64)" : "Text message", draft, ["message", binary ? "base64" : "text"], heldChange, { kind: "textarea", className: "w-wide held-body", name: "message" }),
    ], {
      waits: "the message keeps waiting",
      abort: ["Drop", "Drop the message: the peer never gets it"],
      cancel: ["Send unchanged", "Send it on unchanged"],
      execute: ["Send edited", "Send the message as edited"],
    });
  }

  function decide(held, action) {
    for (const button of dialog.querySelectorAll("menu button")) button.disabled = true;
    decideHeld(held, action).finally(() => {
      for (const button of dialog.querySelectorAll("menu button")) button.disabled = false;
    });
  }

  dialog.addEventListener("cancel", (event) => { event.preventDefault(); dispatch({ type: "heldHidden" }); });

  subscribe((action) => {
    if (redrawsEditor(action, "breakpoints")) renderList();
    switch (action.type) {
      case "editorChanged": if (action.editor === "breakpoints" && !action.rerender) showUnsaved(container, "breakpoints"); break;
      case "heldArrived": case "heldReleased": case "heldSynced": case "heldOpened": case "heldHidden": case "heldFailed":
        renderDialog();
        // Only the queue: the breakpoint list may be half edited.
        container.querySelector("#held-queue")?.replaceWith(heldQueue());
        break;
      case "viewChanged": if (state.view === "breakpoints") { if (!state.breakpoints.draft) loadBreakpoints(); else renderList(); } break;
    }
  });
}
