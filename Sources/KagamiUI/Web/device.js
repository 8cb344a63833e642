// Device setup: what a phone, tablet or simulator needs to send its traffic through Kagami and
// trust its certificates, in the words its Settings use.
import { state, subscribe } from "./store.js";
import { decideClient, loadClients, loadDevice } from "./api.js";
import { el } from "./format.js";
import { qrSVG } from "./qr.js";

/** Who may use the proxy: devices waiting (allow, deny), those allowed or denied since, the networks allowed from the start. */
function clientsSection() {
  const clients = state.clients;
  if (!clients || clients.error || !state.device?.listensOnNetwork) return null;
  const decide = (address, decision) => decideClient(address, decision).catch((error) => alert(error.message));
  const seen = (client) => `${client.attempts} connection${client.attempts === 1 ? "" : "s"}${client.lastRequest ? ` · ${client.lastRequest}` : ""}`;
  const row = (address, note, buttons) => el("tr", { dataset: { address } },
    el("td", { className: "mono" }, address), el("td", { className: "note" }, note), el("td", {}, ...buttons));
  return el("section", { className: "rule-section", id: "device-clients" },
    el("div", { className: "section-head" }, el("h3", {}, "Devices using the proxy")),
    el("p", { className: "note" }, `Served: this machine${clients.networks.length > 1 ? `, ${clients.networks.slice(1).join(", ")}` : ""}${clients.allowed.length ? `, ${clients.allowed.join(", ")}` : ""}. Any other device is held and answered "not allowed" until you allow it.`),
    clients.pending.length === 0 ? el("p", { className: "note", id: "clients-none-waiting" }, "No device is waiting.")
      : el("table", { id: "clients-pending", className: "profile" }, el("tbody", {}, ...clients.pending.map((client) => row(client.address, seen(client), [
        el("button", { className: "primary client-allow", onclick: () => decide(client.address, "allow") }, `Allow ${client.address}`),
        el("button", { className: "client-deny", onclick: () => decide(client.address, "deny") }, "Deny")])))),
    clients.allowed.length === 0 ? null : el("table", { id: "clients-allowed", className: "profile" }, el("tbody", {}, ...clients.allowed.map((address) =>
      row(address, "allowed", [el("button", { className: "client-forget", onclick: () => decide(address, "forget") }, "Stop allowing")])))),
    clients.denied.length === 0 ? null : el("table", { id: "clients-denied", className: "profile" }, el("tbody", {}, ...clients.denied.map((client) =>
      row(client.address, `denied · ${seen(client)}`, [el("button", { className: "client-allow", onclick: () => decide(client.address, "allow") }, "Allow after all")])))));
}

export function mountDevice({ container }) {
  function render() {
    const device = state.device;
    if (!device) { container.replaceChildren(el("p", { className: "note panel-note" }, "Reading the machine's addresses…")); return; }
    if (device.error) {
      container.replaceChildren(el("div", { className: "panel-note" }, el("p", { className: "error-text" }, `Could not read the proxy's addresses: ${device.error}`),
        el("button", { onclick: () => loadDevice() }, "Try again")));
      return;
    }
    const port = String(device.port);
    const host = device.addresses[0]?.address;
    const where = device.listensOnNetwork
      ? el("table", { id: "device-addresses", className: "profile" }, el("tbody", {},
        ...device.addresses.map(({ interface: name, address }) => el("tr", {}, el("td", {}, name), el("td", { className: "mono" }, `${address.includes(":") ? `[${address}]` : address}:${port}`)))))
      : el("div", { id: "device-not-listening", className: "panel-error" },
        `Kagami's proxy listens on ${device.listenHost} only, which a device on the network can't reach. Start it with `,
        el("code", {}, `kagami proxy --host 0.0.0.0 --port ${port}`),
        " (it then takes requests from any host on your network: do it on a network you trust).");
    const server = host || "(this machine's address on the Wi-Fi)";
    const caURL = device.caURL;
    const certificate = device.certificatePath || "~/.kagami/ca/kagami-ca.pem";
    container.replaceChildren(
      el("div", { className: "panel-head" }, el("h2", {}, "Device setup"), el("span", { className: "note" }, "Send an iPhone's, Android's or simulator's traffic through Kagami")),
      clientsSection(),
      el("section", { className: "rule-section" },
        el("div", { className: "section-head" }, el("h3", {}, "Proxy address")),
        el("p", { className: "note" }, "The device and this machine must be on the same network."),
        where,
        el("p", {}, "Port: ", el("strong", { id: "device-port" }, port))),
      el("section", { className: "rule-section device-ca" },
        el("div", { className: "section-head" }, el("h3", {}, "Certificate page")),
        el("div", { className: "qr", id: "device-qr", dataset: { text: caURL } }, qrSVG(caURL, 5)),
        el("div", {}, el("p", {}, "Once the device uses the proxy, open ", el("a", { id: "device-ca-url", href: caURL, target: "_blank" }, caURL),
          " in its browser (or scan this code with its camera) to download Kagami's certificate authority."),
          el("p", { className: "note" }, "The page exists only through the proxy: the proxy answers it itself."))),
      el("section", { className: "rule-section", id: "device-ios" },
        el("div", { className: "section-head" }, el("h3", {}, "iPhone and iPad")),
        el("ol", {},
          el("li", {}, "Settings → Wi-Fi → the (i) next to the network → Configure Proxy → Manual. Server: ", el("code", {}, server), ", Port: ", el("code", {}, port), ". Save."),
          el("li", {}, "In Safari, open ", el("code", {}, caURL), " and allow the download of the configuration profile."),
          el("li", {}, "Settings → General → VPN & Device Management → the Kagami profile → Install."),
          el("li", {}, "Settings → General → About → Certificate Trust Settings → turn on full trust for the Kagami CA (without it HTTPS still fails)."))),
      el("section", { className: "rule-section", id: "device-android" },
        el("div", { className: "section-head" }, el("h3", {}, "Android")),
        el("ol", {},
          el("li", {}, "Settings → Network & internet → Wi-Fi → the network → the pencil (edit) button (or long press → Modify) → Advanced options → Proxy: Manual. Hostname: ", el("code", {}, server), ", Port: ", el("code", {}, port), "."),
          el("li", {}, "Open ", el("code", {}, caURL), " in the browser and download the certificate."),
          el("li", {}, "Settings → Security → Encryption & credentials → Install a certificate → CA certificate → choose the downloaded file."),
          el("li", {}, "Apps targeting Android 7 or later trust user CAs only when their network security configuration says so (", el("code", {}, "<certificates src=\"user\"/>"), " in a debug build)."))),
      el("section", { className: "rule-section", id: "device-simulator" },
        el("div", { className: "section-head" }, el("h3", {}, "iOS Simulator")),
        el("p", {}, "The simulator uses the Mac's proxy settings (System Settings → Network → Details → Proxies). Trust the CA in the booted simulator with:"),
        el("pre", { id: "device-simctl" }, `xcrun simctl keychain booted add-root-cert ${certificate}`),
        el("p", { className: "note" }, "Android emulator: start it with ", el("code", {}, `-http-proxy http://10.0.2.2:${port}`), " (10.0.2.2 is this machine as the emulator sees it).")),
    );
  }

  // Devices waiting to be allowed: asked for while the proxy listens on the network.
  let polling = null;
  function followClients() {
    if (polling || !state.device?.listensOnNetwork) return;
    loadClients();
    polling = setInterval(loadClients, 3000);
  }

  function showWaiting() {
    const waiting = state.clients?.pending?.length || 0;
    const badge = document.getElementById("clients-waiting");
    badge.hidden = waiting === 0;
    badge.textContent = String(waiting);
  }

  subscribe((action) => {
    switch (action.type) {
      case "clientsLoaded": showWaiting(); if (state.view === "device") render(); break;
      case "deviceLoaded": render(); followClients(); break;
      case "viewChanged": if (state.view === "device") { if (!state.device) render(); loadDevice(); } break;
    }
  });
}
