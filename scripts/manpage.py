"""Writes kagami(1) in roff from the command tree ArgumentParser describes
(`kagami --experimental-dump-help`): every subcommand with its abstract, discussion, arguments
and options, so the page says what `--help` says.

Usage: python3 scripts/manpage.py KAGAMI_BINARY > kagami.1
"""
import datetime
import json
import subprocess
import sys


def roff(text):
    """Text safe in a roff line: backslashes doubled, a leading dot or quote escaped."""
    text = (text or "").replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in text.splitlines())


def synopsis(argument):
    names = argument.get("names") or []
    flags = ", ".join(("--" if n["kind"] == "long" else "-") + n["name"] for n in names)
    value = argument.get("valueName")
    if argument["kind"] == "positional":
        return f"<{value}>"
    if argument["kind"] == "option":
        return f"{flags} <{value}>"
    return flags


def command(lines, info, path):
    name = " ".join(path)
    if len(path) > 1:
        lines.append(f".SH {roff(name.upper())}")
    lines.append(f".B {roff(name)}")
    lines.append(roff(info.get("abstract", "")))
    if info.get("discussion"):
        lines.append(".PP")
        lines.append(roff(info["discussion"]))
    for argument in info.get("arguments", []):
        if not argument.get("shouldDisplay", True):
            continue
        lines.append(".TP")
        lines.append(f".B {roff(synopsis(argument))}")
        text = argument.get("abstract", "")
        if argument.get("defaultValue") not in (None, "", "false"):
            text += f" (default: {argument['defaultValue']})"
        lines.append(roff(text))
    for sub in info.get("subcommands", []):
        if sub.get("shouldDisplay", True) and sub["commandName"] != "help":
            command(lines, sub, path + [sub["commandName"]])


def main():
    binary = sys.argv[1]
    tool = json.loads(subprocess.run([binary, "--experimental-dump-help"], check=True, capture_output=True, text=True).stdout)["command"]
    version = subprocess.run([binary, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    lines = [
        f'.TH KAGAMI 1 "{datetime.date.today().isoformat()}" "kagami {roff(version)}" "User Commands"',
        ".SH NAME",
        f"kagami \\- {roff(tool.get('abstract', ''))}",
        ".SH SYNOPSIS",
        ".B kagami",
        "<subcommand> [options]",
        ".SH DESCRIPTION",
    ]
    command(lines, tool, ["kagami"])
    lines += [".SH SEE ALSO", "kagami <subcommand> \\-\\-help, and the documents in /usr/share/doc/kagami."]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
