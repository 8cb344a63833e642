#!/usr/bin/env python3
"""Reads `perf script -F comm,tid,ip,sym,dso` of a proxy's profile and prints where its CPU went,
in µs per exchange: by thread (the event loops against the others: a session file's writer),
kernel against user space, the proxy's own functions (the innermost frame of a Kagami module,
counting what it calls in the Swift runtime, malloc and libc but not SwiftNIO or the kernel),
and the symbols with the most samples of their own.
Usage: profile_report.py SCRIPT_TXT MICROSECONDS_PER_EXCHANGE"""
import collections
import re
import subprocess
import sys


def samples(path):
    found, current = [], None
    for line in open(path, errors="replace"):
        if not line.strip():
            if current:
                found.append(current)
            current = None
        elif not line[0].isspace():
            current = (line.split()[0], [])
        elif current is not None:
            match = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)$", line.rstrip())
            if match:
                current[1].append((match.group(1), match.group(2).rsplit("/", 1)[-1]))
    if current:
        found.append(current)
    return found


def demangled(symbols):
    try:
        out = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(symbols),
                             capture_output=True, text=True, check=True).stdout.split("\n")
        return dict(zip(symbols, out))
    except (OSError, subprocess.CalledProcessError):
        return {s: s for s in symbols}


def main():
    all_samples = samples(sys.argv[1])
    per_exchange = float(sys.argv[2])
    total = len(all_samples)
    if total == 0:
        print("no samples")
        return
    us = lambda count: per_exchange * count / total
    loops = [s for s in all_samples if s[0].startswith("NIO")]
    others = [s for s in all_samples if not s[0].startswith("NIO")]
    kernel = lambda group: sum(1 for _, frames in group if frames and frames[0][1].endswith("kallsyms]"))
    print(f"{total} samples, {per_exchange:.1f} µs of CPU per exchange:")
    for name, group in (("event loops", loops), ("other threads", others)):
        k = kernel(group)
        print(f"  {name:<14} {us(len(group)):6.1f} µs  (kernel {us(k):.1f}, user {us(len(group) - k):.1f})")
    by_library = collections.Counter(frames[0][1] for _, frames in others if frames)
    if others:
        print("  other threads by library: " + ", ".join(f"{lib} {us(n):.1f}" for lib, n in by_library.most_common(6)))

    framework = re.compile(r"^\$s\d*(7NIOCore|8NIOPosix|8NIOHTTP1|6NIOSSL|7NIOHTTP2)")
    own = collections.Counter()
    for _, frames in loops:
        for symbol, library in frames:
            if re.match(r"^\$s\d+Kagami", symbol):
                own[symbol] += 1
                break
            if framework.match(symbol) or symbol.startswith("c_nio") or library.endswith("kallsyms]"):
                break
    names = demangled([s for s, _ in own.most_common(25)])
    print(f"\nKagami's own code on the event loops: {us(sum(own.values())):.1f} µs; the functions with most:")
    for symbol, count in own.most_common(25):
        print(f"  {us(count):5.2f} µs  {names[symbol][:130]}")

    leaves = collections.Counter(frames[0][0] for _, frames in all_samples if frames)
    names = demangled([s for s, _ in leaves.most_common(25)])
    print("\nsymbols with most samples of their own (all threads):")
    for symbol, count in leaves.most_common(25):
        print(f"  {us(count):5.2f} µs  {100 * count / total:4.1f}%  {names[symbol][:120]}")


if __name__ == "__main__":
    main()
