"""Turns the wrk outputs of bench/proxy/run.sh into one table, the Kagami ratios and a results file."""
import argparse
import re
import sys

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}
TARGET_ORDER = ["nginx-direct", "nginx-proxy", "nio-proxy", "mitmdump", "mitmdump-save", "kagami-reverse", "kagami-rules20", "kagami-contract", "kagami-forward"]
FILE_ORDER = ["small", "large"]


def milliseconds(text):
    match = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text)
    if not match:
        raise ValueError(f"unexpected wrk duration {text!r}")
    return float(match.group(1)) * UNITS[match.group(2)]


def parse_wrk(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    result = {"rps": None, "p50": None, "p99": None, "requests": 0, "socket_errors": "0", "non2xx": 0}
    if match := re.search(r"^Requests/sec:\s+([0-9.]+)", text, re.M):
        result["rps"] = float(match.group(1))
    for percent, key in (("50", "p50"), ("99", "p99")):
        if match := re.search(rf"^\s+{percent}%\s+(\S+)", text, re.M):
            # wrk prints 0 when every request timed out: there is no latency to report.
            result[key] = milliseconds(match.group(1)) or None
    if match := re.search(r"^\s+(\d+) requests in", text, re.M):
        result["requests"] = int(match.group(1))
    if match := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text):
        kinds = ("connect", "read", "write", "timeout")
        counts = [f"{kind} {count}" for kind, count in zip(kinds, match.groups()) if count != "0"]
        result["socket_errors"] = ", ".join(counts) if counts else "0"
    if match := re.search(r"Non-2xx or 3xx responses: (\d+)", text):
        result["non2xx"] = int(match.group(1))
    if result["rps"] is None:
        result["error"] = text.strip().splitlines()[-1] if text.strip() else "no wrk output"
    return result


def megabytes(kilobytes):
    return int(kilobytes) / 1024 if kilobytes and int(kilobytes) > 0 else None


def median_run(runs):
    ordered = sorted(runs, key=lambda run: run["rps"] or 0.0)
    return ordered[len(ordered) // 2]


def fmt(value, pattern):
    return "n/a" if value is None else pattern.format(value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--date", required=True)
    parser.add_argument("--machine", required=True)
    parser.add_argument("--tools", required=True)
    parser.add_argument("--settings", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--cores", type=int, required=True)
    parser.add_argument("--disk-mb-s", type=int, nargs=2, default=None,
                        help="the disk's sequential write bandwidth before and after the runs (dd, fdatasync)")
    parser.add_argument("--large-bytes", type=int, default=1048576)
    args = parser.parse_args()

    runs = {}
    for line in open(args.results, encoding="utf-8"):
        fields = line.rstrip("\n").split("\t")
        round_number, target, file, peak_kb, warm_kb, end_kb, warmup_path, wrk_path, recorded, stop, own_ticks, machine_ticks, clock = fields
        run = parse_wrk(wrk_path)
        # CPU microseconds per request of the measured run: the target's processes, and the machine.
        per_request = 1e6 / int(clock) / run["requests"] if run["requests"] else None
        run["cpu_us"] = int(own_ticks) * per_request if per_request else None
        run["machine_us"] = int(machine_ticks) * per_request if per_request else None
        warmup = parse_wrk(warmup_path)
        run["round"] = int(round_number)
        run["rss_mb"] = megabytes(peak_kb)
        run["rss_warm_mb"] = megabytes(warm_kb)
        run["rss_end_mb"] = megabytes(end_kb)
        run["sent"] = run["requests"] + warmup["requests"]
        run["warmup_problems"] = warmup["non2xx"] or warmup["socket_errors"] != "0"
        run["recorded"] = int(recorded) if recorded else None
        run["stop"] = stop
        runs.setdefault((target, file), []).append(run)
    chosen = {key: median_run(value) for key, value in runs.items()}

    header = ("| target | file | req/s | req/s by round | p50 ms | p99 ms | CPU µs/req: target | CPU µs/req: machine | peak RSS MB | RSS MB after warm-up → end | requests "
              "| non-2xx/3xx | socket errors | flows recorded / requests incl. warm-up | exit s |")
    lines = [header, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|"]
    for file in FILE_ORDER:
        for target in TARGET_ORDER:
            run = chosen.get((target, file))
            if run is None:
                continue
            recorded = "" if run["recorded"] is None else f"{run['recorded']:,} / {run['sent']:,}"
            if target.startswith("kagami") and run["recorded"] is None:
                recorded = "none (no summary on exit)"
            growth = f"{fmt(run['rss_warm_mb'], '{:.1f}')} → {fmt(run['rss_end_mb'], '{:.1f}')}"
            # Every round's req/s, in round order: the spread the median hides.
            by_round = " · ".join(fmt(each["rps"], "{:,.0f}") for each in sorted(runs[(target, file)], key=lambda each: each["round"]))
            lines.append(
                f"| {target} | {file} | {fmt(run['rps'], '{:,.0f}')} | {by_round} | {fmt(run['p50'], '{:.2f}')} | "
                f"{fmt(run['p99'], '{:.2f}')} | {fmt(run['cpu_us'], '{:.0f}')} | {fmt(run['machine_us'], '{:.0f}')} | "
                f"{fmt(run['rss_mb'], '{:.1f}')} | {growth} | {run['requests']:,} | "
                f"{run['non2xx']} | {run['socket_errors']} | {recorded} | {run['stop']} |"
            )
    table = "\n".join(lines)

    ratio_lines = []
    for file in FILE_ORDER:
        floor, nginx = chosen.get(("nio-proxy", file)), chosen.get(("nginx-proxy", file))
        if floor and floor["rps"] and nginx and nginx["rps"]:
            ratio_lines.append(
                f"- nio-proxy (SwiftNIO's own HTTP/1 handlers relaying each part, nothing captured), {file}: "
                f"/nginx-proxy {floor['rps'] / nginx['rps']:.2f}×; p99 {fmt(floor['p99'], '{:.2f}')} ms")
    budget_lines = []
    for file in FILE_ORDER:
        nginx = chosen.get(("nginx-proxy", file))
        if not nginx or not nginx["machine_us"] or nginx["cpu_us"] is None:
            continue
        # At 0.60× nginx-proxy's req/s, each request may cost the machine its cores' time over that
        # rate; the load generator's, the origin's and the kernel's share is what the nginx-proxy
        # run's requests cost the machine besides nginx-proxy itself.
        others = nginx["machine_us"] - nginx["cpu_us"]
        budget = args.cores * 1e6 / (0.60 * nginx["rps"]) - others
        spent = [f"{target} {run['cpu_us']:.0f}" for target in ("nio-proxy", "kagami-reverse", "kagami-forward")
                 if (run := chosen.get((target, file))) and run["cpu_us"] is not None]
        budget_lines.append(
            f"- {file}: at 0.60× nginx-proxy's req/s ({0.60 * nginx['rps']:,.0f}) the proxy may spend at most {budget:.0f} µs of CPU per request "
            f"({args.cores} cores; the machine spent {nginx['machine_us']:.0f} µs per request in the nginx-proxy run, {nginx['cpu_us']:.0f} of them in nginx-proxy, "
            f"{others:.0f} in the load generator, the origin and the kernel); spent: " + ", ".join(spent) + " µs")
    for kagami in ("kagami-reverse", "kagami-forward"):
        for file in FILE_ORDER:
            ours = chosen.get((kagami, file))
            if not ours or not ours["rps"]:
                continue
            parts = []
            for other, goal in (("mitmdump", "target ≥ 20×"), ("mitmdump-save", "both keep every exchange"), ("nginx-proxy", "target ≥ 0.60×")):
                theirs = chosen.get((other, file))
                if theirs and theirs["rps"]:
                    parts.append(f"/{other} {ours['rps'] / theirs['rps']:.2f}× ({goal})")
            floor = chosen.get(("nio-proxy", file))
            if floor and floor["rps"]:
                parts.append(f"/nio-proxy {ours['rps'] / floor['rps']:.2f}× (SwiftNIO's floor)")
            p99 = fmt(ours["p99"], "{:.2f}")
            parts.append(f"p99 {p99} ms (target ≤ 5 ms)")
            direct = chosen.get(("nginx-direct", file))
            if direct and direct["p99"] is not None and ours["p99"] is not None:
                parts.append(f"p99 added over nginx-direct {ours['p99'] - direct['p99']:+.2f} ms (≤ 5 ms)")
            ratio_lines.append(f"- {kagami}, {file}: " + "; ".join(parts))
    if args.disk_mb_s:
        disk = max(args.disk_mb_s)
        for kagami in ("kagami-reverse", "kagami-forward"):
            ours, floor = chosen.get((kagami, "large")), chosen.get(("nio-proxy", "large"))
            if not ours or not ours["rps"]:
                continue
            written = ours["rps"] * args.large_bytes / 1048576
            parts = [f"{written:,.0f} MB/s of response bodies captured = {written / disk:.2f}× the disk's sequential write bandwidth "
                     f"({args.disk_mb_s[0]:,} / {args.disk_mb_s[1]:,} MB/s before / after the runs; target ≥ 0.90×)"]
            if floor and floor["rps"]:
                parts.append(f"/nio-proxy {ours['rps'] / floor['rps']:.2f}× (target ≥ 0.75×)")
            ratio_lines.append(f"- {kagami}, large, against the disk: " + "; ".join(parts))
    for file in FILE_ORDER:
        ruled, plain = chosen.get(("kagami-rules20", file)), chosen.get(("kagami-reverse", file))
        if ruled and ruled["rps"] and plain and plain["rps"]:
            ratio_lines.append(
                f"- kagami-rules20/kagami-reverse, {file}: {ruled['rps'] / plain['rps']:.2f}× (target ≥ 0.90: "
                "20 enabled non-matching rules cost ≤ 10% of throughput)")
    for file in FILE_ORDER:
        checked, plain = chosen.get(("kagami-contract", file)), chosen.get(("kagami-reverse", file))
        if checked and checked["rps"] and plain and plain["rps"]:
            growth = (checked["p99"] - plain["p99"]) if checked["p99"] is not None and plain["p99"] is not None else None
            ratio_lines.append(
                f"- kagami-contract/kagami-reverse, {file}: {checked['rps'] / plain['rps']:.2f}× (target ≥ 0.90); "
                f"p99 {fmt(growth, '{:+.2f}')} ms (target ≤ +1 ms): the contract check of every exchange")

    problems = []
    for (target, file), run_list in sorted(runs.items()):
        for run in run_list:
            where = f"{target}, {file}, round {run['round']}"
            if run.get("error"):
                problems.append(f"- {where}: wrk failed: {run['error']}")
            if run["non2xx"]:
                problems.append(f"- {where}: {run['non2xx']} non-2xx/3xx responses of {run['requests']}")
            if run["socket_errors"] != "0":
                problems.append(f"- {where}: socket errors: {run['socket_errors']}")
            if run["warmup_problems"]:
                problems.append(f"- {where}: errors during the warm-up as well")

    rounds = max(run["round"] for run_list in runs.values() for run in run_list)
    report = "\n".join([
        f"# Proxy benchmark, {args.date}",
        "",
        f"- Machine: {args.machine}",
        f"- Tools: {args.tools}",
        f"- Settings: {args.settings}",
        f"- Command: `{args.command.strip()}`",
        "- Targets: nginx-direct = the nginx origin itself; nginx-proxy = a second nginx with "
        "proxy_pass and upstream keepalive 32; nio-proxy = bench/NIOProxyBaseline, the least reverse proxy SwiftNIO makes "
        "(its own HTTP/1 server and client handlers, one kept-alive origin connection per client connection, each part relayed as it comes, "
        "nothing captured: the floor under any proxy built on SwiftNIO); mitmdump = `mitmdump --mode reverse:… -q` (flows kept in memory only, none written); mitmdump-save = the same with `-w FILE`, writing every flow to a file as Kagami writes its session; "
        "kagami-reverse = `kagami proxy --reverse … --session` (capture on); kagami-rules20 = the same with "
        "`--rules` naming 20 enabled rules (4 each of Block List, Map Local, Map Remote, No Caching, Rewrite) "
        "that match no request; kagami-contract = kagami-reverse with `--contract` naming an OpenAPI description of both paths, "
        "every exchange checked; kagami-forward = `kagami proxy` "
        "driven with absolute-form request lines (capture on). Each proxy process is started fresh per run.",
        "- Peak RSS: VmHWM at the end of the run; RSS after warm-up → end: VmRSS before and after the measured "
        "run (nginx: master + workers summed; nginx-direct is the origin). Flows recorded: the count Kagami "
        "prints when it stops (a request cut off when wrk stops may count as a flow); exit s: seconds from "
        "SIGTERM to exit (Kagami flushes its session). CPU µs/req: CPU time (user + system) over the measured run's "
        "requests, of the target's processes (nginx-direct: the origin) and of the whole machine (every process and the kernel's "
        "own work, such as writing dirty pages back).",
        "  Load generator, origin and proxy share the same cores." + (
            f" With {rounds} rounds each row is the round with the median req/s; req/s by round lists every round's." if rounds > 1 else ""),
        "",
        table,
        "",
        "## Kagami ratios (req/s)",
        "",
        *ratio_lines,
        "",
        "## CPU per request against the 0.60× nginx-proxy target",
        "",
        "Load generator, origin and proxy share the cores, so a proxy's req/s is bounded by the CPU each request costs all of them.",
        "",
        *(budget_lines or ["- (no nginx-proxy run)"]),
        "",
        "## Errors seen by wrk",
        "",
        *(problems or ["- none"]),
        "",
    ])
    with open(args.output, "w", encoding="utf-8") as out:
        out.write(report)
    sys.stdout.write(report)
    print(f"\nwritten to {args.output}")


if __name__ == "__main__":
    main()
