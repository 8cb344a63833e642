"""Opens a big session in headless Chromium and times what a user does first: the newest rows,
a host filter, text filters, scrolling. Prints the figures and writes them as Markdown.

Usage: python bench/ui/measure.py --ui URL --count N --out FILE [--kagami TEXT] [--session-bytes B] [--build-seconds S]
(bench/ui/run.sh starts the proxy and calls this.) The session is bench/ui/har.py's: exchange n is
http://h{n % 20}.test/items/n?page={n % 50}.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Tests", "UI"))
from page import browser, percentile, scroll_frames  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

HOSTS = 20
RUNS = 3

STATE = """
const done = arguments[arguments.length - 1];
import(new URL('store.js', document.baseURI).href).then(({ state }) => done({
  flows: state.flows.length, visible: state.visible.length, loading: state.loading, query: state.list.query,
  older: state.list.older, reading: state.list.reading, total: state.list.total,
  heap: performance.memory ? performance.memory.usedJSHeapSize : null }));
"""

# The filter's text given to the page (as the filter box does after its pause in typing) until the
# server's answer is drawn: {ms, rows, firstRow, api} (api: the request's own time).
FILTER = """
const [text, done] = [arguments[0], arguments[arguments.length - 1]];
Promise.all([import(new URL('api.js', document.baseURI).href), import(new URL('store.js', document.baseURI).href)]).then(([api, store]) => {
  performance.clearResourceTimings();
  // When the page holds every exchange it filters them itself, at once.
  const local = store.state.list.query === "" && store.listComplete();
  const started = performance.now();
  api.applyFilter(text);
  const deadline = started + 60000;
  (function check() {
    const { state } = store;
    const drawn = document.querySelector('#sequence-spacer .row:not([hidden])');
    if (local || (state.list.query === text.trim() && !state.loading) || performance.now() > deadline) {
      requestAnimationFrame(() => requestAnimationFrame(() => {
        const entries = performance.getEntriesByType('resource').filter((e) => e.name.includes('api/flows?') && e.name.includes('filter='));
        const rows = [...document.querySelectorAll('#sequence-spacer .row:not([hidden])')].sort((a, b) => b.dataset.position - a.dataset.position);
        done({ ms: performance.now() - started, local, visible: state.visible.length, newest: rows[0] ? rows[0].innerText.replace(/\\n/g, ' ') : '',
               api: entries.length ? entries[0].duration : null, timedOut: performance.now() > deadline });
      }));
      return;
    }
    setTimeout(check, 5);
  })();
});
"""


def api_ms(ui, query, token):
    started = time.perf_counter()
    request = urllib.request.Request(f"{ui}api/flows?{query}", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
    return (time.perf_counter() - started) * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ui", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--kagami", default="")
    parser.add_argument("--session-bytes", type=int, default=0)
    parser.add_argument("--build-seconds", default="")
    args = parser.parse_args()
    # The printed address carries the admin token: the API gets it as a header, the browser
    # keeps it as a cookie from the first page on.
    ui, _, token = args.ui.partition("?token=")
    ui = ui if ui.endswith("/") else ui + "/"
    first_page = f"{ui}?token={token}"
    newest = f"/items/{args.count - 1}?"
    driver = browser()
    driver.set_script_timeout(180)
    wait = WebDriverWait(driver, 600)
    figures = {}
    try:
        # The API alone: the newest page, and a host filter's.
        api_ms(ui, "limit=1", token)  # the first request opens the store
        figures["api_newest_1000_ms"] = [round(api_ms(ui, "limit=1000&order=newest", token)) for _ in range(RUNS)]
        figures["api_host_filter_1000_ms"] = [round(api_ms(ui, "limit=1000&order=newest&filter=host:h7.test", token)) for _ in range(RUNS)]

        # Opening: the newest rows drawn, from the page's start (ms since navigation).
        driver.get(first_page)
        shown = []
        for _ in range(RUNS):
            driver.get(ui)
            driver.execute_script("localStorage.clear()")
            driver.get("about:blank")
            driver.get(ui)
            wait.until(lambda d: d.execute_script("return window.kagamiTimings && window.kagamiTimings.listShown"))
            at = driver.execute_script("return window.kagamiTimings.listShown.at")
            visible_rows = driver.execute_script("return [...document.querySelectorAll('#sequence-spacer .row:not([hidden])')].map(r => r.innerText).join('\\n')")
            assert newest in visible_rows, f"the newest exchange {newest} is not in sight"
            shown.append(at)
        figures["first_newest_rows_ms"] = shown

        # The background read up to the page's bound.
        started = time.time()
        wait.until(lambda d: not d.execute_async_script(STATE)["reading"] and d.execute_async_script(STATE)["flows"] >= min(args.count, 200_000))
        state = driver.execute_async_script(STATE)
        figures["rows_held"] = state["flows"]
        figures["read_to_bound_s"] = round(time.time() - started, 1)
        figures["js_heap_mb"] = round(state["heap"] / 1e6) if state["heap"] else None
        figures["counts_text"] = driver.execute_script("return document.getElementById('counts').textContent")
        figures["older_text"] = driver.execute_script("const e = document.getElementById('older'); return e.hidden ? '' : e.textContent")

        # Filters answered by the server (the page holds fewer rows than the session).
        for name, text in (("host_filter", "host:h7.test"), ("text_filter_rare", f"items/{args.count // 3}?"), ("text_filter_common", "page=7")):
            runs = []
            for _ in range(RUNS):
                driver.execute_async_script(FILTER, "")
                runs.append(driver.execute_async_script(FILTER, text))
            figures[f"{name}_ms"] = [round(r["ms"]) for r in runs]
            figures[f"{name}_api_ms"] = [round(r["api"]) if r["api"] is not None else None for r in runs]
            figures[f"{name}_newest_row"] = runs[-1]["newest"]
            figures[f"{name}_where"] = "in the page" if runs[-1]["local"] else "by the server"
            assert not any(r["timedOut"] for r in runs), f"{text}: no answer in 60 s"
        driver.execute_async_script(FILTER, "")
        wait.until(lambda d: not d.execute_async_script(STATE)["reading"])

        # Scrolling the rows held, top to bottom.
        gaps = scroll_frames(driver, 300)["gaps"]
        figures["scroll_frames"] = len(gaps)
        figures["scroll_p50_ms"] = round(percentile(gaps, 0.5), 1)
        figures["scroll_p95_ms"] = round(percentile(gaps, 0.95), 1)
        figures["scroll_max_ms"] = round(max(gaps), 1)
        figures["scroll_rows"] = driver.execute_async_script(STATE)["visible"]
    finally:
        driver.quit()

    for name, value in figures.items():
        print(f"ui bench {name}: {value}")
    med = lambda values: round(statistics.median([v for v in values if v is not None])) if any(v is not None for v in values) else None  # noqa: E731
    lines = [
        f"# Web UI on a session of {args.count:,} exchanges — {time.strftime('%Y-%m-%d')}",
        "",
        f"`bench/ui/run.sh` (COUNT={args.count}): a session built by `kagami import` of generated HARs (bench/ui/har.py), served by "
        f"`kagami proxy`, opened in headless Chromium ({platform.machine()}, {os.cpu_count()} cores shared with other work) by selenium. "
        f"Kagami: {args.kagami}. Session file: {args.session_bytes / 1e6:,.0f} MB ({args.session_bytes / max(1, args.count):,.0f} B per exchange); "
        f"built in {args.build_seconds} s.",
        "",
        f"Each figure is the median of {RUNS} runs (all runs in brackets). Filter times run from the filter's text given to the page "
        "(what the filter box does after typing pauses for 120 ms) until the server's answer is drawn, including the page's own 150 ms "
        "wait before it asks the server; `api` is the request's own time as the browser saw it.",
        "",
        "| What | Time | Goal |",
        "|---|---|---|",
        f"| Newest rows drawn, from the page's start | {med(figures['first_newest_rows_ms'])} ms {figures['first_newest_rows_ms']} | ≤ 1 s |",
        f"| Newest page from the API (`limit=1000&order=newest`) | {med(figures['api_newest_1000_ms'])} ms {figures['api_newest_1000_ms']} | ≤ 1 s |",
        f"| Host filter `host:h7.test` drawn | {med(figures['host_filter_ms'])} ms {figures['host_filter_ms']} (api {figures['host_filter_api_ms']}) | ≤ 1 s |",
        f"| Text filter, rare (`items/{args.count // 3}?`: one exchange, every row searched) drawn | {med(figures['text_filter_rare_ms'])} ms "
        f"{figures['text_filter_rare_ms']} (api {figures['text_filter_rare_api_ms']}) | ≤ 1 s |",
        f"| Text filter, common (`page=7`) drawn | {med(figures['text_filter_common_ms'])} ms {figures['text_filter_common_ms']} "
        f"(api {figures['text_filter_common_api_ms']}) | ≤ 1 s |",

        f"| Scroll top to bottom over {figures['scroll_rows']:,} rows, {figures['scroll_frames']} frames | p50 {figures['scroll_p50_ms']} ms, "
        f"p95 {figures['scroll_p95_ms']} ms, max {figures['scroll_max_ms']} ms | smooth |",
        "",
        f"Filtered {figures['host_filter_where']} (the page filters itself only when it holds every exchange of the session). "
        "Between runs the filter is emptied, which reads the newest rows again and starts the background read of older ones, so "
        "each filter's request meets the server while it reads such a page, as when one types soon after opening the session.",
        "",
        f"The page holds {figures['rows_held']:,} rows (its bound), read in the background in {figures['read_to_bound_s']} s after the newest "
        f"were drawn; JavaScript heap then {figures['js_heap_mb']} MB. The count reads “{figures['counts_text']}”; above the list: "
        f"“{figures['older_text']}”.",
        "",
        f"Newest rows of the answers: host `{figures['host_filter_newest_row']}`; rare text `{figures['text_filter_rare_newest_row']}`; "
        f"common text `{figures['text_filter_common_newest_row']}`.",
        "",
    ]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as out:
        out.write("\n".join(lines))
    print(f"wrote {args.out}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
