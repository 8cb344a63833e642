// Copy Response: the response as text (Copy cURL comes from the API).

/** Status line, headers and the (decoded) body as text. */
export function responseText(flow, body) {
  const response = flow.response;
  if (!response) return flow.error ? `No response: ${flow.error.message}` : "No response.";
  const lines = [`${response.version} ${response.status} ${response.reason}`];
  for (const [name, value] of response.headers) lines.push(`${name}: ${value}`);
  return lines.join("\r\n") + "\r\n\r\n" + (body ? new TextDecoder("utf-8", { fatal: false }).decode(body) : "");
}
