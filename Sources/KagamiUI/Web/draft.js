// Draft description: an OpenAPI or API Blueprint description drafted from the session's
// exchanges (or the chosen ones) by POST /api/draft, shown with a download.
import { state } from "./store.js";
import { el } from "./format.js";
import { draftDescription } from "./api.js";

/** Adds the "Draft description" button after `after` and the dialog it opens. */
export function mountDraft({ after }) {
  const format = el("select", { id: "draft-format", title: "Description format", onchange: () => run() },
    el("option", { value: "openapi" }, "OpenAPI 3.1 (YAML)"),
    el("option", { value: "apib" }, "API Blueprint"));
  const hints = el("input", { id: "draft-paths", type: "text", placeholder: "Path hints, space-separated: /repos/{owner}/{repo}", spellcheck: false });
  const text = el("textarea", { id: "draft-text", readOnly: true, spellcheck: false });
  const note = el("p", { id: "draft-note", className: "note" });
  const download = el("a", { id: "draft-download", className: "button", download: "api.yaml" }, "Download");
  const dialog = el("dialog", { id: "draft-dialog", className: "draft-dialog", "aria-labelledby": "draft-title" },
    el("form", { method: "dialog" },
      el("h2", { id: "draft-title" }, "Draft description"),
      el("div", { className: "row-fields" }, format, hints, el("button", { type: "button", id: "draft-again", onclick: () => run() }, "Draft again")),
      text, note,
      el("menu", {}, download, el("button", { value: "close" }, "Close"))));
  document.body.append(dialog);
  let ids = null;

  async function run() {
    note.textContent = "Drafting…";
    download.removeAttribute("href");
    const body = { format: format.value, paths: hints.value.split(/\s+/).filter(Boolean) };
    if (ids) body.ids = ids;
    try {
      const answer = await draftDescription(body);
      text.value = answer.text;
      const skipped = answer.skipped.length ? ` Skipped: ${answer.skipped.join("; ")}` : "";
      note.textContent = `${answer.operations} operation${answer.operations === 1 ? "" : "s"} from ${answer.exchanges} exchange${answer.exchanges === 1 ? "" : "s"}.${skipped}`;
      const previous = download.href;
      download.href = URL.createObjectURL(new Blob([answer.text], { type: "text/plain" }));
      download.download = answer.format === "apib" ? "api.apib" : "api.yaml";
      if (previous) URL.revokeObjectURL(previous);
    } catch (error) {
      text.value = "";
      note.textContent = `Could not draft: ${error.message}`;
    }
  }

  const button = el("button", {
    id: "draft-description",
    title: "Draft an API description (OpenAPI or API Blueprint) from the session, or from the exchanges chosen with Ctrl/Cmd- or Shift-click",
    onclick: () => {
      // Two or more chosen exchanges, in list order; else the whole session (one row is chosen
      // whenever an exchange is being looked at, which is not a choice of what to describe).
      ids = state.marked.size > 1 ? state.visible.map((index) => state.flows[index].id).filter((id) => state.marked.has(id)) : null;
      if (!dialog.open) dialog.showModal();
      run();
    },
  }, "Draft description");
  after.after(button);
}
