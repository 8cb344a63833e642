"""Writes an HTTP Archive of N small exchanges spread over a few hosts, for loading a session
quickly with `kagami import` (the web UI's scale tests and benchmark).

Usage: python bench/ui/har.py COUNT OUT.har [--start N] [--hosts H]
Exchange n asks http://hN.test/items/n?page=n%50 (host n % H); every 1000th answers 404.
"""
import argparse
import json


def entry(n, hosts, start_ms):
    millis = start_ms + n
    seconds, ms = divmod(millis, 1000)
    hh, rest = divmod(seconds % 86400, 3600)
    mm, ss = divmod(rest, 60)
    status = 404 if n % 1000 == 999 else 200
    body = '{"n":%d}' % n
    return {
        "startedDateTime": "2026-11-26T%02d:%02d:%02d.%03dZ" % (hh, mm, ss, ms),
        "time": 1,
        "request": {"method": "GET", "url": f"http://h{n % hosts}.test/items/{n}?page={n % 50}", "httpVersion": "HTTP/1.1",
                    "headers": [{"name": "Host", "value": f"h{n % hosts}.test"}], "queryString": [{"name": "page", "value": str(n % 50)}],
                    "cookies": [], "headersSize": -1, "bodySize": 0},
        "response": {"status": status, "statusText": "OK" if status == 200 else "Not Found", "httpVersion": "HTTP/1.1",
                     "headers": [{"name": "Content-Type", "value": "application/json"}], "cookies": [],
                     "content": {"size": len(body), "mimeType": "application/json", "text": body},
                     "redirectURL": "", "headersSize": -1, "bodySize": len(body)},
        "cache": {},
        "timings": {"send": 0, "wait": 1, "receive": 0},
    }


def write(count, path, start=0, hosts=20):
    """Exchanges start ... start+count-1, one a millisecond, into the archive at `path`."""
    start_ms = 1_795_000_000_000 - 2_000_000
    with open(path, "w") as out:
        out.write('{"log": {"version": "1.2", "creator": {"name": "kagami bench", "version": "1"}, "entries": [\n')
        for i, n in enumerate(range(start, start + count)):
            if i:
                out.write(",\n")
            out.write(json.dumps(entry(n, hosts, start_ms), separators=(",", ":")))
        out.write("\n]}}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("count", type=int)
    parser.add_argument("out")
    parser.add_argument("--start", type=int, default=0, help="number of the first exchange")
    parser.add_argument("--hosts", type=int, default=20)
    args = parser.parse_args()
    write(args.count, args.out, args.start, args.hosts)


if __name__ == "__main__":
    main()
