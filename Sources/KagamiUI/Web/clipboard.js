// Copying text: the Clipboard API when the page may use it, else a selected text area and the
// browser's copy command; when neither works, the text opens selected in a dialog to copy by hand.
import { dispatch } from "./store.js";
import { truncate } from "./format.js";

/** Copies `text`; the banner says what was copied. `showTool` is the dialog of last resort. */
export async function copyText(text, what, showTool) {
  let copied = false;
  try {
    if (navigator.clipboard?.writeText) { await navigator.clipboard.writeText(text); copied = true; }
  } catch { copied = false; }
  if (!copied) copied = copyBySelection(text);
  if (copied) dispatch({ type: "notice", message: `Copied ${what}: ${truncate(text.split("\n")[0], 160)}${text.includes("\n") ? " …" : ""}` });
  else showTool(`Copy ${what}`, text, "The browser did not allow copying: the text is selected, press Ctrl-C (⌘C).");
  return copied;
}

function copyBySelection(text) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "copy-source";
  document.body.append(area);
  area.select();
  let done = false;
  try { done = document.execCommand("copy"); } catch { done = false; }
  area.remove();
  return done;
}
