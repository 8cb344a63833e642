"""`kagami mcp --session FILE` over standard input and output, driven by the official Python MCP
client as an agent drives it: the newest page of search_exchanges and a filtered search, each
timed from the call to its answer (JSON-RPC, the tool, the answer's JSON both ways), RUNS times
after one call not counted; then the same server driven by bare JSON-RPC lines (no client-side
parsing or validation of the answer: the server's own cost with the pipe), with the answer's size.
Prints Markdown tables (bench/mcp/run.sh adds them to the results).

Usage: python bench/mcp/measure.py KAGAMI SESSION [RUNS]
"""
import asyncio
import json
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CALLS = [
    ("Newest page", "search_exchanges", {}),
    ("Host filter", "search_exchanges", {"filter": "host:h7.test"}),
    ("Text filter, rare (one exchange)", "search_exchanges", {"filter": "items/333333?"}),
]


async def main(kagami, session_file, runs):
    parameters = StdioServerParameters(command=kagami, args=["mcp", "--session", session_file])
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            print("| What | Call | Median | Calls |")
            print("|---|---|--:|---|")
            for what, tool, arguments in CALLS:
                await session.call_tool(tool, arguments)
                times = []
                for _ in range(runs):
                    started = time.perf_counter()
                    result = await session.call_tool(tool, arguments)
                    times.append((time.perf_counter() - started) * 1000)
                    assert not result.isError, result.content
                times.sort()
                shown = ", ".join(f"{t:.1f}" for t in times)
                print(f"| {what} | `{tool}` `{json.dumps(arguments)}` | {times[len(times) // 2]:.1f} ms | [{shown}] |")


RAW_CALLS = [
    ("Newest page", "search_exchanges", {}),
    ("Newest 500", "search_exchanges", {"limit": 500}),
    ("Session and count", "list_sessions", {}),
]


def raw(kagami, session_file, runs):
    """Bare JSON-RPC over the pipe: a request line out, the answer line back."""
    process = subprocess.Popen([kagami, "mcp", "--session", session_file], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def ask(message):
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        return process.stdout.readline() if "id" in message else None
    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    newest = json.loads(ask({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_exchanges", "arguments": {"limit": 1}}}))
    calls = RAW_CALLS + [("Newest exchange read", "get_exchange", {"id": newest["result"]["structuredContent"]["exchanges"][0]["id"]})]
    print("| What | Call | Answer line | Median | Calls |")
    print("|---|---|--:|--:|---|")
    number = 2
    for what, tool, arguments in calls:
        times = []
        size = 0
        for run in range(runs + 1):
            started = time.perf_counter()
            line = ask({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
            number += 1
            if run:
                times.append((time.perf_counter() - started) * 1000)
            size = len(line)
        times.sort()
        shown = ", ".join(f"{t:.1f}" for t in times)
        print(f"| {what} | `{tool}` `{json.dumps(arguments)}` | {size:,} B | {times[len(times) // 2]:.1f} ms | [{shown}] |")
    process.stdin.close()
    process.wait(30)


if __name__ == "__main__":
    kagami, session_file = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    asyncio.run(main(kagami, session_file, runs))
    print()
    print("Bare JSON-RPC lines, no client library:")
    print()
    raw(kagami, session_file, runs)
