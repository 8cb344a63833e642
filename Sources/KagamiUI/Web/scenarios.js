// The Scenarios panel: the scenario file's scenarios, each operation with its state, and the
// one in force, switched for the next requests; the requests its loading states hold, each
// released with a button. The toolbar's tab names the one in force.
import { state, subscribe } from "./store.js";
import { decideHeld, loadScenarios, useScenario } from "./api.js";
import { el, formatTime, truncate } from "./format.js";

/** A request a loading state holds, with its reason and Release (it goes on as it came). */
export function loadingHoldRow(held) {
  return el("div", { className: "card held-item loading-hold", dataset: { held: held.id } },
    el("div", { className: "card-head" },
      el("span", { className: "mono" }, `${formatTime(held.heldAt)}  ${held.request.method} ${truncate(held.request.url, 160)}`),
      el("span", { className: "note" }, held.reason),
      el("span", { className: "spacer-flex" }),
      el("button", {
        className: "primary", title: "Let the request go on: the app gets the real answer",
        onclick: (event) => { event.target.disabled = true; decideHeld(held, "cancel"); },
      }, "Release")));
}

export function mountScenarios({ container, badge }) {
  function renderBadge() {
    const active = state.scenarios.document?.active;
    badge.hidden = !active;
    badge.textContent = active || "";
    badge.title = active ? `Scenario in force: ${active}` : "";
  }

  function render() {
    renderBadge();
    const { document: doc, error } = state.scenarios;
    const alert = error ? el("div", { id: "scenarios-error", className: "panel-error", role: "alert" }, error) : null;
    if (!doc) {
      container.replaceChildren(el("div", { className: "panel-note" }, alert || el("p", { className: "note" }, "Loading the scenarios…")));
      return;
    }
    const head = el("div", { className: "panel-head" },
      el("h2", {}, "Scenarios"),
      el("span", { id: "scenarios-state", className: "note" }, doc.active ? `In force: ${doc.active}` : "No scenario in force"),
      el("span", { className: "spacer-flex" }),
      el("button", { id: "scenario-off", disabled: !doc.active, onclick: () => useScenario(null) }, "Off"));
    if (!doc.file) {
      container.replaceChildren(...[head, alert, el("p", { className: "note", id: "scenarios-none" },
        "No scenario file is loaded. Start Kagami with --scenarios FILE (docs/SCENARIOS.md) to put operations in their empty, loading, error, offline, slow or recorded state.")].filter(Boolean));
      return;
    }
    const sections = doc.scenarios.map((scenario) => el("section", { className: "rule-section", dataset: { scenario: scenario.name } },
      el("div", { className: "section-head" },
        el("h3", {}, scenario.name),
        el("span", { className: "spacer-flex" }),
        el("button", {
          className: scenario.name === doc.active ? "" : "primary", disabled: scenario.name === doc.active,
          onclick: () => useScenario(scenario.name),
        }, scenario.name === doc.active ? "In force" : "Use")),
      el("table", { className: "kv" }, el("tbody", {}, ...scenario.states.map((entry) =>
        el("tr", {}, el("th", {}, entry.operation), el("td", {}, entry.summary)))))));
    container.replaceChildren(...[head, alert, el("p", { className: "note" }, `From ${doc.file}; a switch applies to the next request.`), loading(), ...sections].filter(Boolean));
  }

  function loading() {
    const held = state.heldExchanges.filter((h) => h.reason);
    return el("section", { className: "rule-section", id: "scenario-held" },
      el("div", { className: "section-head" }, el("h3", {}, `Loading now (${held.length})`)),
      held.length === 0 ? el("p", { className: "note" }, "No request is held by a loading state.") : null,
      ...held.map(loadingHoldRow));
  }

  subscribe((action) => {
    switch (action.type) {
      case "scenariosLoaded": render(); break;
      case "heldArrived": case "heldReleased": case "heldSynced":
        container.querySelector("#scenario-held")?.replaceWith(loading());
        break;
      case "viewChanged": if (state.view === "scenarios") loadScenarios(); break;
    }
  });
  // The tab names the scenario in force from the start.
  loadScenarios();
}
