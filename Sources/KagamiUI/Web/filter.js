// The filter box: words narrow the list, all must hold. `host:` `path:` `method:` `status:` `type:`
// `has:` `contract:` (violations, errors, warnings) `grpc.status:` (a code or its name)
// `grpc.method:` (part of `Service/Method`, or a pattern of it) qualify a word; `grpc` alone is
// every gRPC call; a leading `-` negates a word; anything else matches the URL or the method. `host:` and `path:` take part of the host or path,
// or with `*`, `?` or `[` a pattern of all of it, as rules' locations do (FlowFilter in
// Sources/KagamiStore/FlowQuery.swift answers the same words for the server's pages).
import { authority } from "./format.js";

export function parseFilter(text) {
  const tests = [];
  for (const raw of text.trim().split(/\s+/).filter(Boolean)) {
    const negate = raw.startsWith("-") && raw.length > 1;
    const word = negate ? raw.slice(1) : raw;
    const colon = word.indexOf(":");
    const key = colon > 0 ? word.slice(0, colon).toLowerCase() : "";
    const text = colon > 0 ? word.slice(colon + 1) : word;
    const value = text.toLowerCase();
    let test;
    if (!key && value === "grpc") {
      tests.push(negate ? (f) => !f.grpc : (f) => f.grpc === true);
      continue;
    }
    switch (key) {
      case "host": {
        const matches = locationTest(value);
        test = (f) => matches(f.host.toLowerCase());
        break;
      }
      case "path": {
        const matches = locationTest(text);
        test = (f) => matches(f.path);
        break;
      }
      case "method": test = (f) => f.method.toLowerCase() === value; break;
      case "status": test = statusTest(value); break;
      case "type": test = (f) => (f.type || "").includes(value); break;
      case "grpc.status": test = grpcStatusTest(value); break;
      case "grpc.method": {
        const matches = locationTest(text);
        test = (f) => f.grpc === true && matches(f.path.replace(/^\//, ""));
        break;
      }
      case "contract":
        if (value === "violations" || value === "violation") test = (f) => (f.violations || 0) > 0;
        else if (value === "errors" || value === "error") test = (f) => f.contract === "error";
        else if (value === "warnings" || value === "warning") test = (f) => f.contract === "warning";
        else test = () => false;
        break;
      case "has":
        if (value === "error") test = (f) => f.error != null;
        else if (value === "violation") test = (f) => (f.violations || 0) > 0;
        else if (value === "rule") test = (f) => (f.rules || []).length > 0;
        else test = () => false;
        break;
      default: {
        const needle = word.toLowerCase();
        test = (f) => urlText(f).includes(needle) || f.method.toLowerCase() === needle;
      }
    }
    tests.push(negate ? (f) => !test(f) : test);
  }
  if (tests.length === 0) return null;
  return (f) => tests.every((t) => t(f));
}

/** A `host:` or `path:` value: with `*`, `?` or `[` a pattern of the whole text, else a part of it. */
function locationTest(value) {
  if (!/[*?[]/.test(value)) return (text) => text.includes(value);
  const pattern = wildcardRegExp(value);
  return (text) => pattern.test(text);
}

/**
 * A location wildcard as WildcardPattern (Sources/KagamiFlow/WildcardPattern.swift) reads it:
 * `*` any run, `?` one character, `[a-z0-9]` one of a set (`[!a-z]` or `[^a-z]` none of it, a `]`
 * first is a member); an unclosed `[` and everything else stand for themselves.
 */
export function wildcardRegExp(pattern) {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") source += ".*";
    else if (c === "?") source += ".";
    else {
      const set = c === "[" ? wildcardSet(pattern, i) : null;
      if (set) {
        source += set.source;
        i = set.end;
      } else source += unicodeEscape(c);
    }
  }
  return new RegExp(`^${source}$`, "s");
}

/** The set `[...]` opening at `start`: its RegExp class and the index of its `]`; null when unclosed. */
function wildcardSet(pattern, start) {
  let i = start + 1;
  const negated = pattern[i] === "!" || pattern[i] === "^";
  if (negated) i++;
  let members = "";
  for (let first = true; i < pattern.length; first = false) {
    const c = pattern[i];
    if (c === "]" && !first) return { source: `[${negated ? "^" : ""}${members}]`, end: i };
    if (i + 2 < pattern.length && pattern[i + 1] === "-" && pattern[i + 2] !== "]") {
      const [low, high] = c <= pattern[i + 2] ? [c, pattern[i + 2]] : [pattern[i + 2], c];
      members += `${unicodeEscape(low)}-${unicodeEscape(high)}`;
      i += 3;
    } else {
      members += unicodeEscape(c);
      i += 1;
    }
  }
  return null;
}

/** `\uXXXX`: the character, with no meaning to a RegExp. */
function unicodeEscape(c) {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** `404`, `4xx`, `4`, `none` (no response). */
function statusTest(value) {
  if (value === "none" || value === "failed") return (f) => f.status == null;
  const match = /^([1-5])(?:xx)?$/.exec(value);
  if (match) return (f) => f.status != null && Math.floor(f.status / 100) === Number(match[1]);
  return (f) => String(f.status) === value;
}

/** `5`, `not_found` (either case): a gRPC call whose grpc-status is that. */
function grpcStatusTest(value) {
  if (/^\d+$/.test(value)) return (f) => f.grpcStatus != null && f.grpcStatus.code === Number(value);
  return (f) => f.grpcStatus != null && f.grpcStatus.name.toLowerCase() === value;
}

const urlCache = new WeakMap();
function urlText(f) {
  let text = urlCache.get(f);
  if (text === undefined) {
    text = `${f.scheme}://${authority(f.host, f.port)}${f.path}${f.query != null ? "?" + f.query : ""}`.toLowerCase();
    urlCache.set(f, text);
  }
  return text;
}
