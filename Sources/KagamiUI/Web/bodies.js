// Body viewers: text, JSON (pretty text and a collapsible tree), property lists (XML and binary),
// form fields, multipart parts, hex, image.
import { el, formatSize } from "./format.js";

const TEXT_LIMIT = 256 * 1024;
const HEX_LIMIT = 64 * 1024;

export function guessMode(contentType, bytes) {
  const type = (contentType || "").toLowerCase();
  if (type.startsWith("image/")) return "image";
  if (type.includes("json")) return "json";
  if (isPlist(type, bytes)) return "plist";
  if (type.startsWith("application/x-www-form-urlencoded")) return "form";
  if (type.startsWith("multipart/") && boundaryOf(contentType)) return "multipart";
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
  if (value instanceof PlistScalar) {
    return el("div", { className: "leaf" }, ...label, el("span", { className: value.type === "integer" || value.type === "real" ? "number" : "string" }, value.text),
      " ", el("span", { className: "plist-type" }, value.type));
  }
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

// -- property lists --

function startsWith(bytes, text) {
  if (bytes.length < text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[i] !== text.charCodeAt(i)) return false;
  return true;
}

/** A plist by its type (`application/x-plist`, `application/x-bplist`…) or its first bytes. */
export function isPlist(type, bytes) {
  if (type.includes("plist")) return true;
  if (startsWith(bytes, "bplist00")) return true;
  const head = decodeText(bytes.subarray(0, 512));
  return /^\s*(<\?xml[^>]*>\s*)?(<!DOCTYPE plist[^>]*>\s*)?<plist[\s>]/.test(head);
}

/**
 * A plist value that JSON would show as another type, or not at all: an integer or a real (2 and
 * 2.0 are different types to a plist), a date, data, a UID. Shown with its type beside it.
 */
class PlistScalar {
  constructor(type, text) { this.type = type; this.text = text; }
}

/** A binary plist's real as a plist writes it: 2.0, not 2. */
function realText(number) {
  return Number.isInteger(number) ? number.toFixed(1) : String(number);
}

/** The plist's value: objects, arrays, strings, booleans; numbers, dates, data and UIDs as `PlistScalar`s with their type. */
export function parsePlist(bytes) {
  return startsWith(bytes, "bplist00") ? parseBinaryPlist(bytes) : parseXMLPlist(decodeText(bytes));
}

function parseXMLPlist(text) {
  const doc = new DOMParser().parseFromString(text, "application/xml");
  if (doc.querySelector("parsererror")) throw new Error("not well-formed XML");
  const root = doc.documentElement;
  if (root.nodeName !== "plist") throw new Error(`the root element is <${root.nodeName}>, not <plist>`);
  const first = [...root.children][0];
  if (!first) throw new Error("the plist is empty");
  const value = (node) => {
    switch (node.nodeName) {
      case "dict": {
        const object = {};
        const children = [...node.children];
        for (let i = 0; i < children.length; i += 2) {
          if (children[i].nodeName !== "key") throw new Error(`expected <key> in <dict>, found <${children[i].nodeName}>`);
          if (!children[i + 1]) throw new Error(`<key>${children[i].textContent}</key> has no value`);
          object[children[i].textContent] = value(children[i + 1]);
        }
        return object;
      }
      case "array": return [...node.children].map(value);
      case "string": return node.textContent;
      case "integer": return new PlistScalar("integer", node.textContent.trim());
      case "real": return new PlistScalar("real", node.textContent.trim());
      case "true": return true;
      case "false": return false;
      case "date": return new PlistScalar("date", node.textContent.trim());
      case "data": return new PlistScalar("data", `<${hexOf(base64Bytes(node.textContent.replace(/\s+/g, "")))}>`);
      default: throw new Error(`unknown element <${node.nodeName}>`);
    }
  };
  return value(first);
}

function base64Bytes(text) {
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function hexOf(bytes) {
  return Array.from(bytes.subarray(0, 256), (b) => b.toString(16).padStart(2, "0")).join("") + (bytes.length > 256 ? "…" : "");
}

/** Apple's binary property list ("bplist00"): a trailer pointing at an offset table of objects. */
function parseBinaryPlist(bytes) {
  if (bytes.length < 40) throw new Error("too short for a binary plist");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const trailer = bytes.length - 32;
  const offsetSize = bytes[trailer + 6];
  const refSize = bytes[trailer + 7];
  const count = Number(view.getBigUint64(trailer + 8));
  const top = Number(view.getBigUint64(trailer + 16));
  const tableStart = Number(view.getBigUint64(trailer + 24));
  const uint = (at, size) => { let n = 0; for (let i = 0; i < size; i++) n = n * 256 + bytes[at + i]; return n; };
  const offsets = [];
  for (let i = 0; i < count; i++) offsets.push(uint(tableStart + i * offsetSize, offsetSize));
  const seen = new Set();
  const object = (ref) => {
    if (ref >= count) throw new Error(`object ${ref} is outside the table of ${count}`);
    if (seen.has(ref)) throw new Error("the plist refers to itself");
    seen.add(ref);
    try { return read(offsets[ref]); } finally { seen.delete(ref); }
  };
  const length = (at, info) => {
    if (info !== 0x0f) return [info, at + 1];
    const marker = bytes[at + 1];
    const size = 1 << (marker & 0x0f);
    return [uint(at + 2, size), at + 2 + size];
  };
  const read = (at) => {
    const marker = bytes[at];
    const kind = marker >> 4, info = marker & 0x0f;
    switch (kind) {
      case 0x0: return info === 0x8 ? false : info === 0x9 ? true : null;
      case 0x1: {
        const size = 1 << info;
        if (size === 8) return new PlistScalar("integer", view.getBigInt64(at + 1).toString());
        if (size === 16) return new PlistScalar("integer", view.getBigInt64(at + 9).toString());
        return new PlistScalar("integer", String(uint(at + 1, size)));
      }
      case 0x2: return new PlistScalar("real", realText(info === 2 ? view.getFloat32(at + 1) : view.getFloat64(at + 1)));
      case 0x3: return new PlistScalar("date", new Date(Date.UTC(2001, 0, 1) + view.getFloat64(at + 1) * 1000).toISOString());
      case 0x4: { const [n, start] = length(at, info); return new PlistScalar("data", `<${hexOf(bytes.subarray(start, start + n))}>`); }
      case 0x5: { const [n, start] = length(at, info); return String.fromCharCode(...bytes.subarray(start, start + n)); }
      case 0x6: {
        const [n, start] = length(at, info);
        let text = "";
        for (let i = 0; i < n; i++) text += String.fromCharCode(view.getUint16(start + i * 2));
        return text;
      }
      case 0x8: return new PlistScalar("UID", String(uint(at + 1, info + 1)));
      case 0xa: case 0xc: { const [n, start] = length(at, info); return Array.from({ length: n }, (_, i) => object(uint(start + i * refSize, refSize))); }
      case 0xd: {
        const [n, start] = length(at, info);
        const result = {};
        for (let i = 0; i < n; i++) result[String(object(uint(start + i * refSize, refSize)))] = object(uint(start + (n + i) * refSize, refSize));
        return result;
      }
      default: throw new Error(`unknown object type 0x${marker.toString(16)}`);
    }
  };
  return object(top);
}

export function renderPlist(bytes) {
  let value;
  try { value = parsePlist(bytes); } catch (error) {
    return el("div", {}, el("p", { className: "error-text" }, `Not a readable property list: ${error.message}`), renderHex(bytes));
  }
  return el("div", {}, el("p", { className: "note" }, startsWith(bytes, "bplist00") ? "Binary property list" : "XML property list"),
    el("div", { className: "json-tree plist-tree" }, jsonNode(null, value, 0)));
}

// -- forms and multipart --

function decodeFormPart(text) {
  try { return decodeURIComponent(text.replace(/\+/g, " ")); } catch { return text; }
}

export function renderForm(bytes) {
  const pairs = decodeText(bytes).split("&").filter(Boolean).map((pair) => {
    const equals = pair.indexOf("=");
    return equals < 0 ? [decodeFormPart(pair), ""] : [decodeFormPart(pair.slice(0, equals)), decodeFormPart(pair.slice(equals + 1))];
  });
  return el("table", { className: "form-fields" }, el("tbody", {}, ...pairs.map(([name, value]) => el("tr", {}, el("td", {}, name), el("td", {}, value)))));
}

export function boundaryOf(contentType) {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType || "");
  return match ? match[1] || match[2] : null;
}

/** The parts of a multipart body: their headers, and each body as text or its size. */
export function multipartParts(bytes, boundary) {
  const delimiter = new TextEncoder().encode(`--${boundary}`);
  const find = (from) => {
    outer: for (let i = from; i <= bytes.length - delimiter.length; i++) {
      for (let j = 0; j < delimiter.length; j++) if (bytes[i + j] !== delimiter[j]) continue outer;
      return i;
    }
    return -1;
  };
  const parts = [];
  let at = find(0);
  while (at >= 0) {
    let start = at + delimiter.length;
    if (bytes[start] === 0x2d && bytes[start + 1] === 0x2d) break; // the closing delimiter
    if (bytes[start] === 0x0d) start += 2; else if (bytes[start] === 0x0a) start += 1;
    const next = find(start);
    if (next < 0) break;
    let end = next;
    if (bytes[end - 1] === 0x0a) end--;
    if (bytes[end - 1] === 0x0d) end--;
    const part = bytes.subarray(start, end);
    let split = -1;
    for (let i = 0; i + 3 < part.length; i++) if (part[i] === 13 && part[i + 1] === 10 && part[i + 2] === 13 && part[i + 3] === 10) { split = i; break; }
    const headText = decodeText(split < 0 ? part : part.subarray(0, split));
    const body = split < 0 ? new Uint8Array() : part.subarray(split + 4);
    const headers = headText.split(/\r\n/).filter(Boolean).map((line) => { const c = line.indexOf(":"); return [line.slice(0, c).trim(), line.slice(c + 1).trim()]; });
    parts.push({ headers, body });
    at = next;
  }
  return parts;
}

export function renderMultipart(bytes, contentType) {
  const parts = multipartParts(bytes, boundaryOf(contentType));
  if (!parts.length) return el("div", {}, el("p", { className: "error-text" }, "No parts found with the boundary the Content-Type names."), renderText(bytes));
  return el("div", { className: "multipart" }, ...parts.map(({ headers, body }, index) => {
    const disposition = headers.find(([n]) => n.toLowerCase() === "content-disposition")?.[1] || "";
    const name = /name="([^"]*)"/.exec(disposition)?.[1];
    const file = /filename="([^"]*)"/.exec(disposition)?.[1];
    const type = headers.find(([n]) => n.toLowerCase() === "content-type")?.[1] || "";
    const textual = !type || type.startsWith("text/") || type.includes("json") || type.includes("xml");
    return el("div", { className: "part card" },
      el("div", { className: "part-head" }, el("strong", {}, name ?? `Part ${index + 1}`), file != null ? ` — file ${file}` : "", type ? ` (${type})` : "", `, ${formatSize(body.length)}`),
      el("table", {}, el("tbody", {}, ...headers.map(([n, v]) => el("tr", {}, el("td", {}, n), el("td", {}, v))))),
      textual ? el("pre", {}, decodeText(body.subarray(0, TEXT_LIMIT))) : renderHex(body.subarray(0, 4096)));
  }));
}
