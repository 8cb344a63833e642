// The SSL Proxying panel: which hosts' HTTPS is decrypted (include; empty means every host) and
// which are always tunnelled untouched (exclude), applied to the running proxy on Save and kept
// in the --ssl-proxying-file when there is one.
import { dispatch, state, subscribe } from "./store.js";
import { loadSSLProxying, saveSSLProxying } from "./api.js";
import { el } from "./format.js";

const lines = (text) => text.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);

export function mountSSLProxying({ container }) {
  function render() {
    const ssl = state.ssl;
    if (!ssl.draft) {
      container.replaceChildren(el("div", { className: "panel-note" },
        ssl.loadError ? el("p", { className: "error-text" }, ssl.loadError) : el("p", { className: "note" }, "Loading the SSL Proxying list…"),
        ssl.loadError ? el("button", { onclick: () => loadSSLProxying() }, "Try again") : null));
      return;
    }
    const draft = ssl.draft;
    const list = (key, title, help) => el("section", { className: "rule-section" },
      el("div", { className: "section-head" }, el("h3", {}, `${title} (${(draft[key] || []).length})`)),
      el("p", { className: "note" }, help),
      el("label", { className: "field w-wide", dataset: { field: key } }, "One host or host:port per line; *, ? and [a-z] are wildcards",
        el("textarea", { id: `ssl-${key}`, className: "host-list", spellcheck: false, value: (draft[key] || []).join("\n"), placeholder: key === "include" ? "*.example.com\napi.internal:8443" : "*.apple.com",
          oninput: (event) => { dispatch({ type: "sslChanged", list: key, hosts: lines(event.target.value) }); } })));
    const head = el("div", { className: "panel-head" },
      el("h2", {}, "SSL Proxying"),
      el("span", { id: "ssl-state", className: "note" }, ssl.saving ? "Saving…" : ssl.dirty ? "Unsaved changes" : "In force"),
      el("span", { className: "spacer-flex" }),
      el("button", { id: "ssl-revert", disabled: !ssl.dirty || ssl.saving, onclick: () => dispatch({ type: "sslReverted" }) }, "Revert"),
      el("button", { id: "ssl-save", className: "primary", disabled: !ssl.dirty || ssl.saving, onclick: () => saveSSLProxying() }, "Save"));
    const include = draft.include || [], exclude = draft.exclude || [];
    const hosts = (n) => `${n} host${n === 1 ? "" : "s"}`;
    const decrypted = !draft.intercepting ? "Nothing is decrypted."
      : `Decrypted: ${include.length === 0 ? "every host" : `only the ${hosts(include.length)} under Include`}${exclude.length === 0 ? "" : `, except the ${hosts(exclude.length)} under Exclude`}${ssl.dirty ? " (once saved)" : ""}.`;
    const notes = [
      el("p", { className: "note", id: "ssl-summary" }, decrypted),
      draft.intercepting ? null : el("p", { className: "panel-error", id: "ssl-off" }, "HTTPS interception is off (kagami proxy --no-ssl-proxying): every CONNECT is relayed untouched whatever this list says. Start Kagami without that option to decrypt the hosts listed here."),
      el("p", { className: "note", id: "ssl-file" }, draft.file ? (draft.fileExists ? `Saved to ${draft.file}; a change applies to the next CONNECT.`
        : `Will be saved to ${draft.file} (not written yet); a change applies to the next CONNECT.`)
        : "A change applies to the next CONNECT; it lasts until Kagami stops (start it with --ssl-proxying-file FILE to keep the list)."),
      ssl.error ? el("div", { id: "ssl-error", className: "panel-error", role: "alert" }, ssl.error.error) : null,
    ];
    container.replaceChildren(...[head, ...notes,
      list("include", "Include", "Only these hosts are decrypted; an empty list decrypts every host."),
      list("exclude", "Exclude", "Never decrypted, even when included: apps that pin their certificates, banking, system services.")].filter(Boolean));
  }

  subscribe((action) => {
    switch (action.type) {
      case "sslLoaded": case "sslSaving": case "sslSaveFailed": case "sslReverted": case "sslHostAdded": render(); break;
      case "sslChanged":
        container.querySelector("#ssl-state").textContent = "Unsaved changes";
        for (const button of container.querySelectorAll("#ssl-save, #ssl-revert")) button.disabled = false;
        break;
      case "viewChanged": if (state.view === "ssl" && !state.ssl.draft) loadSSLProxying(); break;
    }
  });
}
