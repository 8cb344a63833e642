// The gRPC tab: a call's messages on each side, read with the method's types when Kagami has
// its schema (--proto-path, --proto-descriptor, server reflection), shown in the proto3 JSON
// mapping with the fields the type doesn't declare; else decoded as Protocol Buffers without a
// .proto (field numbers and wire types, as protoc --decode_raw shows them); and its status.
import { getJSON } from "./api.js";
import { el, truncate } from "./format.js";

/** True when the exchange is a gRPC call (its request is application/grpc…). */
export function isGRPC(flow) {
  return Boolean(flow && flow.grpc);
}

function fieldRows(fields, depth) {
  const rows = [];
  for (const field of fields) {
    const indent = "  ".repeat(depth);
    let value;
    switch (field.kind) {
      case "varint": value = field.int64 ? `${field.value} (int64 ${field.int64})` : `${field.value}${field.sint64 !== field.value ? ` (sint ${field.sint64})` : ""}`; break;
      case "fixed64": value = `${field.value} (double ${field.double})`; break;
      case "fixed32": value = `${field.value} (float ${field.float})`; break;
      case "text": value = JSON.stringify(field.value); break;
      case "bytes": value = `${field.size} bytes: ${truncate(field.hex, 200)}`; break;
      default: value = field.kind === "group" ? "group {" : "{";
    }
    rows.push(el("tr", { className: "grpc-field" },
      el("td", { className: "grpc-number" }, `${indent}${field.number}`),
      el("td", { className: "grpc-wire" }, field.kind),
      el("td", { className: "grpc-value" }, truncate(value, 2000))));
    if (field.fields) {
      rows.push(...fieldRows(field.fields, depth + 1));
      rows.push(el("tr", {}, el("td", {}, `${indent}}`), el("td", {}), el("td", {})));
    }
  }
  return rows;
}

function sideSection(title, side, id) {
  if (!side) return el("section", { id }, el("h3", {}, title), el("p", { className: "note" }, "No response."));
  const parts = [el("h3", {}, `${title} (${side.messages.length} message${side.messages.length === 1 ? "" : "s"})`)];
  if (side.problem) parts.push(el("p", { className: "error-text" }, side.problem));
  for (const message of side.messages) {
    const label = `Message ${message.index + 1}: ${message.length} bytes${message.compressed ? ", compressed" : ""}`;
    parts.push(el("h4", {}, label));
    if (message.note) parts.push(el("p", { className: "note" }, message.note));
    if (message.json !== undefined) {
      parts.push(el("p", { className: "grpc-type" }, message.type));
      parts.push(el("pre", { className: "grpc-json" }, truncate(JSON.stringify(message.json, null, 2), 200000)));
      if (message.unknownFields) {
        parts.push(el("p", { className: "note" }, "Fields its type does not declare:"));
        parts.push(el("table", { className: "grpc-fields grpc-unknown" }, el("tbody", {},
          ...message.unknownFields.flatMap((field) => fieldRows([field], 0).map((row) => {
            if (field.path) row.firstChild.textContent = `${field.path}: ${row.firstChild.textContent}`;
            return row;
          })))));
      }
      continue;
    }
    if (message.typeError) parts.push(el("p", { className: "error-text grpc-type-error" }, message.typeError));
    if (message.fields) {
      parts.push(message.fields.length
        ? el("table", { className: "grpc-fields" }, el("tbody", {}, ...fieldRows(message.fields, 0)))
        : el("p", { className: "note" }, "Empty message."));
    } else {
      if (message.error) parts.push(el("p", { className: "error-text" }, message.error));
      parts.push(el("pre", { className: "grpc-raw" }, message.text ?? message.hex ?? ""));
    }
  }
  return el("section", { id }, ...parts);
}

export function grpcPanel(flow) {
  const holder = el("div", { id: "grpc" }, el("p", { className: "note" }, "Loading the call…"));
  getJSON(`api/flows/${flow.id}/grpc`).then((call) => {
    const status = call.status
      ? el("p", { id: "grpc-status", className: call.status.code === 0 ? "" : "error-text" },
        `${call.status.name} (${call.status.code})${call.status.message ? `: ${call.status.message}` : ""}`)
      : el("p", { id: "grpc-status", className: "note" }, "No status (the call did not end, or its trailers were not seen).");
    const method = call.method
      ? el("p", { id: "grpc-method" }, `${call.method.service}/${call.method.name}(${call.method.clientStreaming ? "stream " : ""}${call.method.inputType}) → ${call.method.serverStreaming ? "stream " : ""}${call.method.outputType}`)
      : el("p", { id: "grpc-method", className: "note" }, call.schemaNote ?? "No schema has this method: messages are decoded without a .proto.");
    holder.replaceChildren(el("section", {}, el("h3", {}, "Status"), status, method),
      sideSection("Request", call.request, "grpc-request"), sideSection("Response", call.response, "grpc-response"));
  }, (error) => holder.replaceChildren(el("p", { className: "error-text" }, `Could not read the call: ${error.message}`)));
  return [holder];
}
