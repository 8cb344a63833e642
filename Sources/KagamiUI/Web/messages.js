// The Messages tab: the WebSocket messages of an upgraded exchange, both directions in the
// order they passed, filterable by text and direction, following a socket that is still open.
import { getJSON, injectMessage } from "./api.js";
import { el, formatSize, formatTime, truncate } from "./format.js";

const PAGE = 1000;
const OPCODES = { 1: "text", 2: "binary", 8: "close", 9: "ping", 10: "pong" };

/** True when the exchange switched to WebSocket: it has messages to show. */
export function isWebSocket(flow) {
  if (!flow || !flow.response || flow.response.status !== 101) return false;
  return (flow.response.headers || []).some(([name, value]) => name.toLowerCase() === "upgrade" && value.toLowerCase() === "websocket");
}

/** Every stored message of the exchange, a page at a time. */
async function loadMessages(id) {
  const messages = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await getJSON(`api/flows/${id}/messages?offset=${offset}&limit=${PAGE}`);
    messages.push(...page.messages);
    if (page.messages.length < PAGE) return messages;
  }
}

function payloadText(message) {
  if (message.opcode === 8) {
    if (message.closeCode == null) return "(no code)";
    return `${message.closeCode}${message.closeReason ? ` ${message.closeReason}` : ""}`;
  }
  if (message.text != null) return message.text;
  const bytes = atob(message.base64 || "");
  let hex = "";
  for (let i = 0; i < Math.min(bytes.length, 64); i++) hex += bytes.charCodeAt(i).toString(16).padStart(2, "0") + " ";
  return `${hex.trim()}${bytes.length > 64 ? " …" : ""}`;
}

// The panel last built, kept while its exchange stays in the inspector: the inspector redraws
// when the exchange's record changes (its socket ends, a contract check arrives), and what was
// typed, filtered and loaded must survive that.
let kept = { id: null, nodes: null, ended: null };

export function messagesPanel(flow) {
  const ended = flow.timings && flow.timings.end != null;
  if (kept.id === flow.id && kept.nodes) {
    if (ended) kept.ended();
    return kept.nodes;
  }
  const holder = el("div", { id: "messages" }, el("p", { className: "note" }, "Loading messages…"));
  const filter = el("input", { id: "messages-filter", type: "search", placeholder: "Filter messages", "aria-label": "Filter messages" });
  const direction = el("select", { id: "messages-direction", "aria-label": "Direction" },
    el("option", { value: "" }, "Both directions"),
    el("option", { value: "send" }, "Sent (client → server)"),
    el("option", { value: "receive" }, "Received (server → client)"));
  let all = [];
  const show = () => {
    const needle = filter.value.toLowerCase();
    const rows = all.filter((m) => (!direction.value || m.type === direction.value) && (!needle || payloadText(m).toLowerCase().includes(needle)));
    if (!all.length) { holder.replaceChildren(el("p", { className: "note" }, "No messages.")); return; }
    holder.replaceChildren(el("table", { id: "messages-table" },
      el("thead", {}, el("tr", {}, ...["", "Time", "Type", "Size", "Data"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows.map((m) => el("tr", { className: `message-${m.type}` },
        el("td", { title: m.type === "send" ? "client → server" : "server → client" }, m.type === "send" ? "↑" : "↓"),
        el("td", { title: new Date(m.time * 1000).toISOString() }, formatTime(m.time * 1000)),
        el("td", {}, `${OPCODES[m.opcode] || m.opcode}${m.compressed ? " (deflate)" : ""}`),
        el("td", {}, messageSize(m)),
        el("td", { className: "message-data" }, truncate(payloadText(m), 2000),
          m.note ? el("div", { className: "message-note note" }, m.note) : null))))));
  };
  filter.oninput = show;
  direction.onchange = show;
  // While the tab is open, new messages of a socket still open are fetched each second (from
  // the last one shown); the tab stops asking once it is closed or the socket has ended.
  let away = 0;
  const follow = async () => {
    if (kept.nodes !== nodes) return;
    // Out of sight for a while (another tab): stop; opening the tab again builds it anew.
    if (!holder.isConnected) {
      if (++away > 5) { kept = { id: null, nodes: null, ended: null }; return; }
      setTimeout(follow, 1000);
      return;
    }
    away = 0;
    try {
      const page = await getJSON(`api/flows/${flow.id}/messages?offset=${all.length}&limit=${PAGE}`);
      if (page.messages.length) { all = all.concat(page.messages); show(); }
      const detail = await getJSON(`api/flows/${flow.id}`);
      if (detail.timings && detail.timings.end != null && page.messages.length < PAGE) {
        send.hidden = true;
        const rest = await getJSON(`api/flows/${flow.id}/messages?offset=${all.length}&limit=${PAGE}`);
        if (rest.messages.length) { all = all.concat(rest.messages); show(); }
        return;
      }
    } catch { /* Kagami went away: the connection banner says so; try again */ }
    setTimeout(follow, 1000);
  };
  // A message of one's own into the open socket, to either peer.
  const text = el("input", { id: "inject-text", type: "text", placeholder: "Text message to send", "aria-label": "Message to send", spellcheck: false });
  const target = el("select", { id: "inject-direction", "aria-label": "Send to" },
    el("option", { value: "send" }, "to the server"),
    el("option", { value: "receive" }, "to the client"));
  const outcome = el("span", { id: "inject-outcome", className: "note", role: "status" });
  const button = el("button", { id: "inject-send", type: "submit" }, "Send");
  const send = el("form", { id: "inject", className: "message-filters", hidden: flow.timings && flow.timings.end != null },
    text, target, button, outcome);
  send.onsubmit = async (event) => {
    event.preventDefault();
    button.disabled = true;
    const error = await injectMessage(flow.id, target.value, text.value);
    button.disabled = false;
    outcome.className = error ? "error-text" : "note";
    outcome.textContent = error || "Sent.";
    if (!error) text.value = "";
  };
  loadMessages(flow.id).then((messages) => { all = messages; show(); setTimeout(follow, 1000); },
    (error) => holder.replaceChildren(el("p", { className: "error-text" }, `Could not load the messages: ${error.message}`)));
  const nodes = [el("section", {}, el("h3", {}, "Messages"), el("div", { className: "message-filters" }, filter, direction), send, holder)];
  kept = { id: flow.id, nodes, ended: () => { send.hidden = true; } };
  return nodes;
}

/** The payload's size, and for a compressed message the bytes it took on the wire too. */
export function messageSize(m) {
  const kept = m.truncated ? ", first part kept" : "";
  if (!m.compressed) return `${formatSize(m.size)}${kept}`;
  if (m.payloadSize == null) return `${formatSize(m.size)} on the wire${kept}`;
  return `${formatSize(m.payloadSize)} (${formatSize(m.size)} on the wire)${kept}`;
}
