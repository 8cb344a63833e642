// One way to show times, sizes and durations everywhere in the page.

const pad = (n, w = 2) => String(n).padStart(w, "0");

/** `14:03:07.215` (local time): the list's time column. */
export function formatTime(ms) {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** `2026-11-21 14:03:07.215` (local time): the same format with the date, for the inspector. */
export function formatDateTime(ms) {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${formatTime(ms)}`;
}

export function formatSize(bytes) {
  if (bytes == null) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function formatDuration(ms) {
  if (ms == null) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

/** Cuts long text for a cell or a line; the full text stays in the title. */
/**
 * `host:port` as a URL or a Host field writes it: an IPv6 address in brackets (always in a URL,
 * `inURL`; otherwise when a port follows). No port: the host alone.
 */
export function authority(host, port = null, inURL = false) {
  const name = host.includes(":") && (inURL || port != null) ? `[${host}]` : host;
  return port == null ? name : `${name}:${port}`;
}

/** `host` or `host:port` (a port other than 443), as the SSL Proxying list takes it. */
export function hostPattern(flow) {
  return authority(flow.host, flow.port && flow.port !== 443 ? flow.port : null);
}

export function truncate(text, max = 300) {
  if (text == null) return "";
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

export function statusClass(status) {
  return status ? `s${String(status)[0]}` : "failed";
}

/** Builds an element: el("td", {className: "x"}, "text", child…). */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child == null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}
