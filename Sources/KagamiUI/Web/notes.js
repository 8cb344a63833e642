// The session's notes (changes made to the proxy while it recorded, and who made them) in a
// strip above the Sequence list, oldest first, with their count on the Sequence tab (the
// toolbar has no room for a button of its own at 1440 px: the strip hides and shows itself).
//
// They are not rows of the list: the list is virtual, one fixed-height row per exchange
// addressed by its position in `state.visible`, and that position is what the scroll height,
// the rows kept in place when older ones are put in front or trimmed, Shift-click ranges,
// arrow keys and the exports all count in. A note among the rows would be counted by each.
// Instead, each exchange a note is about carries a "Note" badge in the list, and a click on
// the note selects that exchange and scrolls the list to it.
import { dispatch, state, subscribe } from "./store.js";
import { el, formatTime } from "./format.js";

export function mountNotes({ strip, badge, onSelect }) {
  let drawn = null; // the notes array last drawn, to redraw only when it changed
  const list = el("div", { className: "notes-list", role: "list", "aria-label": "Notes" });
  const summary = el("span", { className: "notes-summary" });
  const toggle = el("button", { id: "notes-toggle", className: "notes-toggle", onclick: () => dispatch({ type: "notesToggled" }) });
  strip.replaceChildren(list, summary, toggle);

  function render() {
    const count = state.notes.length;
    badge.hidden = count === 0;
    badge.textContent = String(count);
    badge.title = `${count} note${count === 1 ? "" : "s"}: changes made to the proxy while it recorded`;
    strip.hidden = count === 0;
    strip.classList.toggle("collapsed", !state.notesOpen);
    list.hidden = !state.notesOpen;
    summary.hidden = state.notesOpen;
    summary.textContent = `${count} note${count === 1 ? "" : "s"}: changes made to the proxy while it recorded`;
    toggle.textContent = state.notesOpen ? "Hide notes" : "Show notes";
    toggle.setAttribute("aria-expanded", String(state.notesOpen));
    if (list.hidden || drawn === state.notes) return;
    // Kept at the newest note unless scrolled up to read older ones.
    const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
    list.replaceChildren(...state.notes.map(row));
    drawn = state.notes;
    if (atEnd) list.scrollTop = list.scrollHeight;
  }

  function row(note) {
    const about = note.flow;
    const node = el("div", { className: `note${about ? " about" : ""}`, dataset: { id: note.id, ...(about ? { flow: about } : {}) }, role: "listitem" },
      el("span", { className: "note-time" }, formatTime(note.time)),
      el("span", { className: "note-author", title: note.author }, note.author),
      el("span", { className: "note-text", title: note.text }, note.text));
    if (about) {
      node.title = "Select the exchange this note is about";
      node.addEventListener("click", () => {
        dispatch({ type: "marked", id: about, mode: "only" });
        onSelect(about);
        dispatch({ type: "revealed", id: about });
      });
    }
    return node;
  }

  subscribe((action) => {
    switch (action.type) {
      case "notesLoaded": case "noteArrived": case "notesToggled": case "cleared": case "viewChanged": render(); break;
    }
  });
  render();
}
