// Tools on one exchange: a cURL command that repeats the request, the response as text.

/** Single-quotes for POSIX shells: 'it'\''s'. */
function shellQuote(text) {
  return `'${String(text).replace(/'/g, `'\\''`)}'`;
}

// curl computes the length itself; the proxy-only fields would not reach a server anyway.
const SKIPPED = new Set(["content-length", "proxy-connection", "proxy-authorization"]);

/** Method, URL, every header in order, and the body (from request-body.bin when it isn't text). */
export function curlCommand(flow, body) {
  const parts = ["curl"];
  const method = flow.request.method;
  const hasBody = body && body.length > 0;
  if (method !== "GET" || hasBody) parts.push("-X", shellQuote(method));
  parts.push(shellQuote(flow.url));
  for (const [name, value] of flow.request.headers) {
    if (SKIPPED.has(name.toLowerCase())) continue;
    parts.push("-H", shellQuote(`${name}: ${value}`));
  }
  if (hasBody) {
    const text = new TextDecoder("utf-8", { fatal: false }).decode(body);
    const isText = !text.includes("\uFFFD") && !text.includes("\0");
    if (isText) parts.push("--data-binary", shellQuote(text));
    // Shell strings can't hold every byte: the command reads the saved body instead.
    else parts.push("--data-binary", "@request-body.bin");
  }
  if (flow.request.version === "HTTP/1.0") parts.push("--http1.0");
  else if (flow.request.version === "HTTP/1.1" && flow.scheme === "https") parts.push("--http1.1");
  return parts.join(" ");
}

/** Status line, headers and the (decoded) body as text. */
export function responseText(flow, body) {
  const response = flow.response;
  if (!response) return flow.error ? `No response: ${flow.error.message}` : "No response.";
  const lines = [`${response.version} ${response.status} ${response.reason}`];
  for (const [name, value] of response.headers) lines.push(`${name}: ${value}`);
  return lines.join("\r\n") + "\r\n\r\n" + (body ? new TextDecoder("utf-8", { fatal: false }).decode(body) : "");
}
