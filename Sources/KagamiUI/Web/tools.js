// Copy Response: the response as text (Copy cURL comes from the API).
import { authority } from "./format.js";

/** Status line, headers and the (decoded) body as text. */
export function responseText(flow, body) {
  const response = flow.response;
  if (!response) return flow.error ? `No response: ${flow.error.message}` : "No response.";
  const lines = [`${response.version} ${response.status} ${response.reason}`];
  for (const [name, value] of response.headers) lines.push(`${name}: ${value}`);
  return lines.join("\r\n") + "\r\n\r\n" + (body ? new TextDecoder("utf-8", { fatal: false }).decode(body) : "");
}

const TEXT_BODY_LIMIT = 256 * 1024;

/**
 * A request or response as it went on the wire: HTTP/1.1 text, or for HTTP/2 a line naming the
 * frames and the same fields (pseudo-headers first). A body that isn't text is summarised.
 */
export function rawMessage(flow, part, bytes) {
  const message = flow[part];
  const http2 = /^HTTP\/2/.test(message.version);
  const lines = [];
  if (http2) {
    const frames = ["HEADERS", message.body.size > 0 ? `DATA (${message.body.size} bytes)` : null, part === "response" && message.trailers?.length ? "HEADERS (trailers)" : null].filter(Boolean);
    lines.push(`# HTTP/2${flow.streamId != null ? ` stream ${flow.streamId}` : ""}: ${frames.join(", ")}, END_STREAM`);
    if (part === "request") {
      lines.push(`:method: ${message.method}`, `:scheme: ${flow.scheme}`, `:authority: ${authorityOf(flow)}`, `:path: ${message.target}`);
    } else lines.push(`:status: ${message.status}`);
  } else if (part === "request") lines.push(`${message.method} ${message.target} ${message.version}`);
  else lines.push(`${message.version} ${message.status} ${message.reason}`.trimEnd());
  for (const [index, [name, value]] of message.headers.entries()) {
    // An HTTP/2 request's Host is made from :authority when the client sent none (as clients
    // do): first, with its value. It is not what went on the wire.
    if (http2 && part === "request" && index === 0 && name === "host" && value === authorityOf(flow)) continue;
    lines.push(`${name}: ${value}`);
  }
  let text = lines.join("\r\n") + "\r\n\r\n";
  if (bytes && bytes.length) text += bodyText(bytes);
  else if (message.body.size > 0) text += `[${message.body.size} bytes of body not kept]`;
  if (message.trailers?.length) text += "\r\n" + message.trailers.map(([n, v]) => `${n}: ${v}`).join("\r\n");
  return text;
}

function authorityOf(request) {
  const standard = (request.scheme === "https" && request.port === 443) || (request.scheme === "http" && request.port === 80);
  return authority(request.host, standard ? null : request.port);
}

function bodyText(bytes) {
  const sample = bytes.subarray(0, 2048);
  const binary = sample.some((b) => b === 0 || b < 9 || (b > 13 && b < 32));
  if (binary) return `[${bytes.length} bytes of binary body: see the Hex view]`;
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes.length > TEXT_BODY_LIMIT ? bytes.subarray(0, TEXT_BODY_LIMIT) : bytes);
  return bytes.length > TEXT_BODY_LIMIT ? `${text}\n[… ${bytes.length - TEXT_BODY_LIMIT} more bytes]` : text;
}
