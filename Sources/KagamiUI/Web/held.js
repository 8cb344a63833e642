// A held exchange as the editor holds it (headers as lines of text) and as the API takes it back.

/** The edit for a held exchange as the API takes it. */
export function heldEdit(held, draft) {
  if (held.phase === "message") {
    const message = draft.message;
    return { message: message.base64 != null ? { base64: message.base64 } : { text: message.text } };
  }
  const part = held.phase === "request" ? "request" : "response";
  const edited = draft[part];
  const headers = edited.headersText.split(/\r?\n/).filter((line) => line.trim() !== "").map((line) => {
    const colon = line.indexOf(":");
    return colon < 0 ? [line.trim(), ""] : [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
  });
  // A gRPC call's messages shown as JSON go back as JSON; the server writes them with the schema.
  const body = held[part].grpc?.messages ? { headers, grpc: { text: edited.grpcText ?? "" } } : { headers, body: edited.body, bodyEncoding: edited.bodyEncoding };
  if (part === "request") Object.assign(body, { method: edited.method, url: edited.url });
  else {
    const status = Number(edited.status);
    Object.assign(body, { status: Number.isInteger(status) ? status : edited.status, reason: edited.reason });
  }
  return { [part]: body };
}

/** What the editor starts from: the held exchange's own values. */
export function heldDraft(held) {
  const draft = {};
  if (held.message) draft.message = { ...held.message };
  for (const part of ["request", "response"]) {
    const message = held[part];
    if (!message) continue;
    draft[part] = { ...message, headersText: message.headers.map(([n, v]) => `${n}: ${v}`).join("\n") };
    if (message.grpc?.messages) draft[part].grpcText = JSON.stringify(message.grpc.messages, null, 2);
  }
  return draft;
}
