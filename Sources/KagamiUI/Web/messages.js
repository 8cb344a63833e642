// The Messages tab: the WebSocket messages of an upgraded exchange, both directions in the
// order they passed, filterable by text and direction, following a socket that is still open.
import { getJSON } from "./api.js";
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

export function messagesPanel(flow) {
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
        el("td", {}, `${formatSize(m.size)}${m.truncated ? ", first part kept" : ""}`),
        el("td", { className: "message-data" }, truncate(payloadText(m), 2000)))))));
  };
  filter.oninput = show;
  direction.onchange = show;
  // While the tab is open, new messages of a socket still open are fetched each second (from
  // the last one shown); the tab stops asking once it is closed or the socket has ended.
  const follow = async () => {
    if (!holder.isConnected) return;
    try {
      const page = await getJSON(`api/flows/${flow.id}/messages?offset=${all.length}&limit=${PAGE}`);
      if (page.messages.length) { all = all.concat(page.messages); show(); }
      const detail = await getJSON(`api/flows/${flow.id}`);
      if (detail.timings && detail.timings.end != null && page.messages.length < PAGE) {
        const rest = await getJSON(`api/flows/${flow.id}/messages?offset=${all.length}&limit=${PAGE}`);
        if (rest.messages.length) { all = all.concat(rest.messages); show(); }
        return;
      }
    } catch { /* Kagami went away: the connection banner says so; try again */ }
    setTimeout(follow, 1000);
  };
  loadMessages(flow.id).then((messages) => { all = messages; show(); setTimeout(follow, 1000); },
    (error) => holder.replaceChildren(el("p", { className: "error-text" }, `Could not load the messages: ${error.message}`)));
  return [el("section", {}, el("h3", {}, "Messages"), el("div", { className: "message-filters" }, filter, direction), holder)];
}
