"""The app of the diff tests, in two builds: httpx through a proxy to diff_origin.py.

Build 2 calls /feed before /config (build 1 called /config first), searches with `query`
instead of `q`, and calls /recommendations. Prints one JSON line: the statuses it got.

Usage: diff_client.py VERSION PROXY_URL ORIGIN_URL
"""
import json
import sys

import httpx


def main():
    version, proxy, origin = int(sys.argv[1]), sys.argv[2], sys.argv[3].rstrip("/")
    statuses = {}
    with httpx.Client(proxy=proxy, timeout=30, trust_env=False) as client:
        def get(path):
            statuses[path] = client.get(origin + path).status_code

        for path in (["/feed?page=1", "/config"] if version >= 2 else ["/config", "/feed?page=1"]):
            get(path)
        get("/search?query=shoes" if version >= 2 else "/search?q=shoes")
        if version >= 2:
            get("/recommendations")
        for _ in range(5):
            get("/slow")
    print(json.dumps(statuses))


if __name__ == "__main__":
    main()
