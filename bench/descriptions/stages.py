#!/usr/bin/env python3
"""Where reading a large description spends its time and memory: runs `kagami lint FILE` with
standard error on a pseudo-terminal, so it shows its reading progress ("Reading F: decoding
12000 of 45016…"), and notes the wall seconds and resident memory (VmRSS) when each stage
starts and when the command ends, with its peak resident memory.

Usage: bench/descriptions/stages.py KAGAMI FILE
Prints a Markdown table: stage, seconds from start, wall and CPU seconds in the stage (CPU
compares runs on a busy machine better), RSS at its start; the peak is the child's maxrss.
"""
import os
import pty
import re
import select
import sys
import time

STAGE = re.compile(rb"Reading [^:]*: ([a-z ]+?)(?: \d+ of \d+)?\xe2\x80\xa6")


def memory(pid, field):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def cpu(pid):
    """User and system CPU seconds the process has used so far."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    kagami, path = sys.argv[1], sys.argv[2]
    primary, secondary = pty.openpty()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(primary)
        os.dup2(secondary, 2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(kagami, [kagami, "lint", path])
    os.close(secondary)
    stages = []  # (name, seconds, CPU seconds, rss)
    buffer = b""
    while True:
        ready, _, _ = select.select([primary], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            # Each redraw starts with a carriage return and ends with an ellipsis: one not
            # ended yet is kept for the next read.
            lines = (buffer + chunk).split(b"\r")
            buffer = b"" if lines[-1].endswith("…".encode()) else lines[-1]
            for line in lines:
                match = STAGE.search(line)
                if match and (not stages or stages[-1][0] != match.group(1).decode()):
                    stages.append((match.group(1).decode(), time.monotonic() - start, cpu(pid), memory(pid, "VmRSS")))
    _, status, usage = os.wait4(pid, 0)
    end = time.monotonic() - start
    total_cpu = usage.ru_utime + usage.ru_stime
    print("| stage | starts at | takes (wall) | takes (CPU) | RSS at its start |")
    print("| --- | --- | --- | --- | --- |")
    for index, (name, at, used, rss) in enumerate(stages):
        until, used_until = (stages[index + 1][1], stages[index + 1][2]) if index + 1 < len(stages) else (end, total_cpu)
        spent = f"{used_until - used:.1f} s" if used is not None and used_until is not None else "?"
        print(f"| {name} | {at:.1f} s | {until - at:.1f} s | {spent} | {rss} MB |")
    print(f"| (end, exit status {os.waitstatus_to_exitcode(status)}) | {end:.1f} s | | {total_cpu:.1f} s in all | peak {usage.ru_maxrss // 1024} MB |")


if __name__ == "__main__":
    main()
