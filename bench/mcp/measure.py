"""`kagami mcp --session FILE` over standard input and output, driven by the official Python MCP
client as an agent drives it: the newest page of search_exchanges and a filtered search, each
timed from the call to its answer (JSON-RPC, the tool, the answer's JSON both ways), RUNS times
after one call not counted. Prints a Markdown table (bench/mcp/run.sh adds it to the results).

Usage: python bench/mcp/measure.py KAGAMI SESSION [RUNS]
"""
import asyncio
import json
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


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 7))
