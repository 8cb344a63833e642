// Body viewers: text, JSON (pretty text and a collapsible tree), hex, image.
import { el, formatSize } from "./format.js";

const TEXT_LIMIT = 256 * 1024;
const HEX_LIMIT = 64 * 1024;

export function guessMode(contentType, bytes) {
  const type = (contentType || "").toLowerCase();
  if (type.startsWith("image/")) return "image";
  if (type.includes("json")) return "json";
  if (type.startsWith("text/") || type.includes("xml") || type.includes("javascript") || type.includes("x-www-form-urlencoded")) return "text";
  return looksLikeText(bytes) ? "text" : "hex";
}

function looksLikeText(bytes) {
  const n = Math.min(bytes.length, 2048);
  for (let i = 0; i < n; i++) {
    const b = bytes[i];
    if (b === 0 || (b < 9) || (b > 13 && b < 32)) return false;
  }
  return true;
}

export function decodeText(bytes) {
  return new TextDecoder("utf-8", { fatal: false }).decode(bytes);
}

export function renderText(bytes) {
  const long = bytes.length > TEXT_LIMIT;
  const pre = el("pre", { className: "body-text" }, decodeText(long ? bytes.subarray(0, TEXT_LIMIT) : bytes));
  if (!long) return pre;
  const more = el("button", { onclick: () => { pre.textContent = decodeText(bytes); more.remove(); note.remove(); } }, "Show all");
  const note = el("p", { className: "note" }, `Showing the first ${formatSize(TEXT_LIMIT)} of ${formatSize(bytes.length)}. `);
  return el("div", {}, pre, note, more);
}

export function renderHex(bytes) {
  const lines = [];
  const n = Math.min(bytes.length, HEX_LIMIT);
  for (let offset = 0; offset < n; offset += 16) {
    const slice = bytes.subarray(offset, Math.min(offset + 16, n));
    const hex = Array.from(slice, (b) => b.toString(16).padStart(2, "0")).join(" ").padEnd(47, " ");
    const ascii = Array.from(slice, (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${offset.toString(16).padStart(8, "0")}  ${hex}  ${ascii}`);
  }
  const pre = el("pre", { className: "hex" }, lines.join("\n"));
  if (bytes.length <= HEX_LIMIT) return pre;
  return el("div", {}, pre, el("p", { className: "note" }, `First ${formatSize(HEX_LIMIT)} of ${formatSize(bytes.length)} shown.`));
}

export function renderImage(bytes, contentType) {
  const url = URL.createObjectURL(new Blob([bytes], { type: contentType || "image/png" }));
  const image = el("img", { src: url, alt: "response image" });
  const size = el("p", { className: "note" });
  image.addEventListener("load", () => { size.textContent = `${image.naturalWidth} × ${image.naturalHeight} px, ${formatSize(bytes.length)}`; });
  image.addEventListener("error", () => { size.textContent = "The bytes are not an image this browser can show."; });
  return el("div", {}, image, size);
}

/** Pretty text plus a tree; nodes deeper than three levels start closed and draw on opening. */
export function renderJSON(bytes) {
  let value;
  try {
    value = JSON.parse(decodeText(bytes));
  } catch (error) {
    return el("div", {}, el("p", { className: "error-text" }, `Not valid JSON: ${error.message}`), renderText(bytes));
  }
  const tree = el("div", { className: "json-tree" }, jsonNode(null, value, 0));
  return el("div", {}, tree);
}

function jsonNode(key, value, depth) {
  const label = key == null ? [] : [el("span", { className: "key" }, JSON.stringify(key)), ": "];
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    const open = Array.isArray(value) ? "[" : "{";
    const close = Array.isArray(value) ? "]" : "}";
    const details = el("details", {}, el("summary", {}, ...label, open, el("span", { className: "preview" }, ` ${entries.length} ${entries.length === 1 ? "item" : "items"} `), close));
    const fill = () => {
      for (const [k, v] of entries) details.append(jsonNode(Array.isArray(value) ? null : k, v, depth + 1));
    };
    if (depth < 3) { details.open = true; fill(); }
    else details.addEventListener("toggle", () => { if (details.open && details.children.length === 1) fill(); });
    return details;
  }
  const kind = typeof value === "string" ? "string" : typeof value === "number" ? "number" : "literal";
  return el("div", { className: "leaf" }, ...label, el("span", { className: kind }, JSON.stringify(value)));
}

export function prettyJSON(bytes) {
  try { return JSON.stringify(JSON.parse(decodeText(bytes)), null, 2); } catch { return null; }
}
