// The inspector: overview, request, response (and messages, for a WebSocket; the gRPC call, for gRPC) and the contract check for the selected exchange. Bodies load when their
// tab opens; large ones wait for a click.
import { dispatch, state, subscribe } from "./store.js";
import { exportHAR, loadBody, loadCurl, repeatFlow } from "./api.js";
import { el, formatDateTime, formatDuration, formatSize, statusClass, truncate } from "./format.js";
import { guessMode, prettyJSON, renderForm, renderHex, renderImage, renderJSON, renderMultipart, renderPlist, renderText } from "./bodies.js";
import { rawMessage, responseText } from "./tools.js";
import { copyText } from "./clipboard.js";
import { contractPanel } from "./contract.js";
import { isWebSocket, messagesPanel } from "./messages.js";
import { grpcPanel, isGRPC } from "./grpc.js";

const AUTO_LOAD_LIMIT = 2 * 1024 * 1024;
const TABS = [["overview", "Overview"], ["request", "Request"], ["response", "Response"], ["raw", "Raw"]];

export function mountInspector({ container, showTool, showRepeat }) {
  const bodies = new Map(); // `${id}/${part}` -> Promise of body

  function body(id, part) {
    const key = `${id}/${part}`;
    if (!bodies.has(key)) {
      bodies.set(key, loadBody(id, part).catch((error) => { bodies.delete(key); throw error; }));
      if (bodies.size > 40) bodies.delete(bodies.keys().next().value);
    }
    return bodies.get(key);
  }

  function render() {
    const detail = state.detail;
    container.hidden = !detail;
    if (!detail) { container.replaceChildren(); return; }
    const tabs = el("div", { className: "tabs", role: "tablist" },
      ...TABS.concat(isWebSocket(detail.flow) ? [["messages", "Messages"]] : [], isGRPC(detail.flow) ? [["grpc", "gRPC"]] : [], [["contract", "Contract"]]).map(([id, label]) => el("button", {
        id: `tab-${id}`, role: "tab", "aria-selected": String(state.inspectorTab === id),
        onclick: () => dispatch({ type: "inspectorTab", tab: id }),
      }, label)),
      el("span", { className: "spacer-flex" }),
      el("button", { id: "copy-curl", disabled: !detail.flow || detail.flow.request.method === "CONNECT", onclick: () => copyCurl(detail.flow), title: "A curl command that sends this request again" }, "Copy cURL"),
      el("button", { id: "repeat", disabled: !canRepeat(detail.flow), onclick: () => repeatOnce(detail.flow), title: "Send this request again through the proxy" }, "Repeat"),
      el("button", { id: "repeat-advanced", disabled: !canRepeat(detail.flow), onclick: () => showRepeat(detail.flow), title: "Send it again several times: iterations, concurrency, delay" }, "Repeat…"),
      el("button", { id: "copy-response", disabled: !detail.flow || !detail.flow.response, onclick: () => copyResponse(detail.flow) }, "Copy Response"),
      el("button", { id: "export-one", disabled: !detail.flow, onclick: () => exportHAR([detail.id], "kagami-exchange.har"), title: "This exchange as an HTTP Archive" }, "Export HAR"),
      el("button", { onclick: () => dispatch({ type: "selected", id: null }), title: "Close", "aria-label": "Close the inspector" }, "×"));
    const content = el("div", { id: "inspector-content" });
    if (detail.error) content.append(el("section", {}, el("p", { className: "error-text" }, detail.error)));
    else if (!detail.flow) content.append(el("section", {}, el("p", { className: "note" }, "Loading…")));
    else {
      const flow = detail.flow;
      if (state.inspectorTab === "request") content.append(...requestPanel(flow));
      else if (state.inspectorTab === "response") content.append(...responsePanel(flow));
      else if (state.inspectorTab === "contract") content.append(...contractPanel(flow));
      else if (state.inspectorTab === "raw") content.append(...rawPanel(flow));
      else if (state.inspectorTab === "messages" && isWebSocket(flow)) content.append(...messagesPanel(flow));
      else if (state.inspectorTab === "grpc" && isGRPC(flow)) content.append(...grpcPanel(flow));
      else content.append(...overview(flow));
    }
    container.replaceChildren(tabs, content);
  }

  function table(rows) {
    return el("table", {}, el("tbody", {}, ...rows.map(([name, value]) => el("tr", {}, el("td", {}, name), el("td", {}, value ?? "")))));
  }

  function section(title, ...children) {
    return el("section", {}, el("h3", {}, title), ...children);
  }

  function overview(flow) {
    const t = flow.timings;
    const rows = [
      ["Method", flow.request.method],
      ["Status", flow.response ? `${flow.response.status} ${flow.response.reason}` : (flow.error ? "failed" : "no response")],
      ["Started", formatDateTime(t.start)],
      ["Duration", formatDuration(flow.duration)],
      ["Request size", `${formatSize(flow.request.body.size)} body${flow.request.body.truncated ? " (only the first part kept)" : ""}`],
      ["Response size", flow.response ? `${formatSize(flow.response.body.size)} body${flow.response.body.truncated ? " (only the first part kept)" : ""}` : ""],
      ["Content type", flow.type || ""],
      ["Client", `${flow.clientAddress || ""}${flow.streamId != null ? `, HTTP/2 stream ${flow.streamId}` : ""}`],
      ["Server", flow.serverAddress || ""],
      ["Mode", flow.mode],
    ];
    const parts = [
      el("section", {}, el("h3", {}, "URL"), el("div", { className: "url", id: "overview-url" }, truncate(flow.url, 2000))),
      section("Overview", table(rows)),
      section("Timings", waterfall(t)),
    ];
    if (flow.appliedRules && flow.appliedRules.length) {
      const rules = table(flow.appliedRules.map((rule) => [rule.name, rule.description]));
      rules.id = "applied-rules";
      parts.push(section("Applied rules", rules));
    }
    if (flow.error) parts.push(section("Error", el("p", { className: "error-text", id: "overview-error" }, `${flow.error.kind}: ${flow.error.message}`)));
    if (flow.tls) {
      const tls = flow.tls;
      parts.push(section("TLS", table([
        ["Server version", tls.version], ["Client version", tls.clientVersion], ["Cipher suite", tls.cipherSuite], ["ALPN", tls.alpn],
        ["Server name (SNI)", tls.serverName], ["Certificate subject", tls.certificateSubject], ["Certificate issuer", tls.certificateIssuer],
        ["SHA-256 fingerprint", tls.certificateFingerprintSHA256],
        ["Server certificate checked", tls.upstreamVerificationDisabled ? "no (--insecure-upstream)" : "yes"],
      ].filter(([, v]) => v != null))));
    }
    if (flow.violations && flow.violations.length) {
      parts.push(section("Contract violations", table(flow.violations.map((v) => [`${v.side} ${v.location}${v.name ? ` ${v.name}` : ""}${v.instancePointer ? ` ${v.instancePointer}` : ""}`, v.message]))));
    }
    return parts;
  }

  function waterfall(t) {
    const end = t.end ?? t.firstByte ?? t.requestSent ?? t.connected ?? t.start;
    const total = Math.max(1, end - t.start);
    // Time held at a breakpoint is its own phase: right after the start (request) and right
    // after the first byte (response), never counted as network time.
    const heldRequest = t.heldAtRequest ?? 0, heldResponse = t.heldAtResponse ?? 0;
    const phases = [
      ["held", "Held at request breakpoint", t.start, heldRequest > 0 ? t.start + heldRequest : null],
      ["connect", "Connect", t.start + heldRequest, t.connected],
      ["send", "Send", t.connected ?? t.start + heldRequest, t.requestSent],
      ["wait", "Wait", t.requestSent, t.firstByte],
      ["held", "Held at response breakpoint", t.firstByte, heldResponse > 0 && t.firstByte != null ? t.firstByte + heldResponse : null],
      ["receive", "Receive", t.firstByte != null ? t.firstByte + heldResponse : null, t.end],
    ].filter(([, , from, to]) => from != null && to != null).map(([id, label, from, to]) => [id, label, from, Math.max(from, to)]);
    const bar = el("div", { className: "waterfall", title: `${formatDuration(total)} in all` },
      ...phases.map(([id, label, from, to]) => el("span", { className: `w-${id}`, title: `${label}: ${formatDuration(to - from)}`, style: `width:${Math.max(0.5, ((to - from) / total) * 100)}%` })));
    const legend = el("div", { className: "legend" }, ...phases.map(([id, label, from, to]) => el("span", {}, el("i", { className: `w-${id}` }), `${label} ${formatDuration(to - from)}`)));
    return el("div", { id: "waterfall" }, bar, legend);
  }

  function headerTable(headers, id) {
    const t = table(headers.map(([name, value]) => [name, truncate(value, 4000)]));
    t.id = id;
    return t;
  }

  function requestPanel(flow) {
    const parts = [section("Request line", el("div", { className: "url" }, `${flow.request.method} ${truncate(flow.request.target, 2000)} ${flow.request.version}`)),
      section(`Headers (${flow.request.headers.length})`, headerTable(flow.request.headers, "request-headers"))];
    const query = flow.query != null ? params(flow.query) : [];
    if (query.length) parts.push(section("Query parameters", tableWithId(query, "query-params")));
    const cookies = flow.request.headers.filter(([n]) => n.toLowerCase() === "cookie")
      .flatMap(([, v]) => v.split(";").map((c) => c.trim()).filter(Boolean).map((c) => splitOnce(c, "=")));
    if (cookies.length) parts.push(section("Cookies", tableWithId(cookies, "request-cookies")));
    const type = (flow.request.body.contentType || "").toLowerCase();
    if (type.startsWith("application/x-www-form-urlencoded") && flow.request.body.stored > 0) {
      const holder = el("div", { id: "form-params" }, el("p", { className: "note" }, "Loading…"));
      body(flow.id, "request").then(
        (loaded) => holder.replaceChildren(table(params(new TextDecoder().decode(loaded.bytes)))),
        (error) => holder.replaceChildren(el("p", { className: "error-text" }, error.message)));
      parts.push(section("Form parameters", holder));
    }
    parts.push(bodySection(flow, "request"));
    return parts;
  }

  function responsePanel(flow) {
    if (!flow.response) return [section("Response", el("p", { className: "note" }, flow.error ? `No response: ${flow.error.message}` : "No response yet."))];
    const response = flow.response;
    const parts = [section("Status line", el("div", { className: `url ${statusClass(response.status)}` }, `${response.version} ${response.status} ${response.reason}`)),
      section(`Headers (${response.headers.length})`, headerTable(response.headers, "response-headers"))];
    const cookies = response.headers.filter(([n]) => n.toLowerCase() === "set-cookie").map(([, v]) => {
      const [pair, ...attributes] = v.split(";");
      const [name, value] = splitOnce(pair.trim(), "=");
      return [name, `${value}${attributes.length ? "  (" + attributes.map((a) => a.trim()).join("; ") + ")" : ""}`];
    });
    if (cookies.length) parts.push(section("Set cookies", tableWithId(cookies, "response-cookies")));
    parts.push(bodySection(flow, "response"));
    if (response.trailers && response.trailers.length) parts.push(section(`Trailers (${response.trailers.length})`, headerTable(response.trailers, "response-trailers")));
    return parts;
  }

  function tableWithId(rows, id) { const t = table(rows); t.id = id; return t; }

  function bodySection(flow, part) {
    const info = flow[part].body;
    const holder = el("div", { className: "body-view", id: `${part}-body` });
    const title = `Body (${formatSize(info.size)}${info.truncated ? `, first ${formatSize(info.stored)} kept` : ""}${info.contentEncoding ? `, ${info.contentEncoding}` : ""})`;
    const wrapper = section(title, holder);
    if (info.size === 0) { holder.append(el("p", { className: "note" }, "No body.")); return wrapper; }
    if (info.stored === 0) { holder.append(el("p", { className: "note" }, "The body was not kept.")); return wrapper; }
    const show = () => {
      holder.replaceChildren(el("p", { className: "note" }, "Loading body…"));
      body(flow.id, part).then((loaded) => showBody(holder, flow, part, loaded), (error) => holder.replaceChildren(el("p", { className: "error-text" }, `Could not load the body: ${error.message}`)));
    };
    if (info.stored > AUTO_LOAD_LIMIT) holder.append(el("button", { onclick: show, id: `${part}-load` }, `Load body (${formatSize(info.stored)})`));
    else show();
    return wrapper;
  }

  function showBody(holder, flow, part, loaded) {
    if (state.detail?.id !== flow.id) return;
    const guessed = guessMode(loaded.contentType, loaded.bytes);
    const mode = state.bodyMode[part] || guessed;
    const modes = [["text", "Text"], ["json", "JSON"], ["plist", "Property list"], ["form", "Form"], ["multipart", "Parts"], ["hex", "Hex"], ["image", "Image"]]
      .filter(([m]) => m === "text" || m === "hex" || m === guessed || (m === "json" && prettyJSON(loaded.bytes) != null));
    const buttons = el("div", { className: "body-modes" }, ...modes.map(([m, label]) => el("button", {
      className: `mode-${m}`, "aria-pressed": String(m === mode),
      onclick: () => { dispatch({ type: "bodyMode", part, mode: m }); },
    }, label)));
    let view;
    switch (mode) {
      case "json": view = renderJSON(loaded.bytes); break;
      case "hex": view = renderHex(loaded.bytes); break;
      case "plist": view = renderPlist(loaded.bytes); break;
      case "form": view = renderForm(loaded.bytes); break;
      case "multipart": view = renderMultipart(loaded.bytes, loaded.contentType); break;
      case "image": view = renderImage(loaded.bytes, loaded.contentType); break;
      default: view = renderText(loaded.bytes);
    }
    const notes = [];
    if (loaded.decoded) notes.push(el("p", { className: "note" }, `Decoded from ${loaded.decoded}.`));
    if (loaded.decodeError) notes.push(el("p", { className: "note" }, loaded.decodeError));
    holder.replaceChildren(buttons, ...notes, view);
  }

  // Kagami builds the command (`GET /api/flows/{id}/curl`), the same one `kagami curl` prints.
  async function copyCurl(flow) {
    try {
      const command = await loadCurl(flow.id);
      showTool("Copy cURL", command, flow.request.body.truncated ? "The request body was larger than the capture limit: only its first part is in this command." : "");
    } catch (error) {
      showTool("Copy cURL", "", `Could not build the command: ${error.message}`);
    }
  }

  async function repeatOnce(flow) {
    dispatch({ type: "notice", message: `Repeating ${flow.request.method} ${truncate(flow.url, 120)}…` });
    try {
      const summary = await repeatFlow(flow.id, { count: 1, concurrency: 1, delayMs: 0 });
      dispatch({ type: "notice", message: `Repeat: ${summary.summary}` });
    } catch (error) {
      dispatch({ type: "error", message: `Could not repeat: ${error.message}` });
    }
  }

  async function copyResponse(flow) {
    let bytes = null;
    if (flow.response && flow.response.body.stored > 0) {
      try { bytes = (await body(flow.id, "response")).bytes; } catch { bytes = null; }
    }
    await copyText(responseText(flow, bytes), "response", showTool);
  }

  /** Request and response as they went on the wire (HTTP/1.1 text; HTTP/2 as its frames and the same fields). */
  function rawPanel(flow) {
    const decoded = state.bodyMode.raw !== "raw";
    const modes = el("div", { className: "body-modes" },
      ...[["decoded", "Bodies decoded"], ["raw", "Bodies as received"]].map(([mode, label]) => el("button", {
        className: `raw-${mode}`, "aria-pressed": String((mode === "decoded") === decoded), onclick: () => dispatch({ type: "bodyMode", part: "raw", mode }),
      }, label)));
    const part = (name) => {
      const pre = el("pre", { className: "raw-text", id: `raw-${name}` }, "Loading…");
      const copy = el("button", { id: `raw-${name}-copy`, disabled: true }, "Copy");
      const message = flow[name];
      const fill = (bytes) => {
        if (state.detail?.id !== flow.id) return;
        const text = rawMessage(flow, name, bytes);
        pre.textContent = text;
        copy.disabled = false;
        copy.onclick = () => copyText(text, `raw ${name}`, showTool);
      };
      if (!message) { pre.textContent = flow.error ? `No response: ${flow.error.message}` : "No response yet."; return section(name === "request" ? "Request" : "Response", pre); }
      if (message.body.stored > 0) {
        const loading = decoded ? body(flow.id, name) : loadBody(flow.id, name, { decode: false });
        loading.then((loaded) => fill(loaded.bytes), () => fill(null));
      } else queueMicrotask(() => fill(null));
      return el("section", {}, el("div", { className: "raw-head" }, el("h3", {}, name === "request" ? "Request" : "Response"), copy), pre);
    };
    return [el("section", {}, modes), part("request"), part("response")];
  }

  subscribe((action) => {
    switch (action.type) {
      case "selected": case "detailLoaded": case "inspectorTab": case "bodyMode": case "cleared": render(); break;
      case "filterChanged": if (action.deselected) render(); break;
      case "flowsLoaded": if (!state.detail) render(); break;
    }
  });
}

function canRepeat(flow) {
  return !!flow && flow.request.method !== "CONNECT" && !flow.request.body.truncated;
}

function splitOnce(text, separator) {
  const index = text.indexOf(separator);
  return index < 0 ? [text, ""] : [text.slice(0, index), text.slice(index + 1)];
}

function params(query) {
  return query.split("&").filter(Boolean).map((pair) => splitOnce(pair, "=").map(decodeParam));
}

function decodeParam(text) {
  try { return decodeURIComponent(text.replace(/\+/g, " ")); } catch { return text; }
}

export { params };
