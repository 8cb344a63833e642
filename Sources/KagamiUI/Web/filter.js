// The filter box: words narrow the list, all must hold. `host:` `method:` `status:` `type:` `has:`
// `contract:` (violations, errors, warnings) qualify a word; a leading `-` negates it; anything
// else matches the URL or the method.

export function parseFilter(text) {
  const tests = [];
  for (const raw of text.trim().split(/\s+/).filter(Boolean)) {
    const negate = raw.startsWith("-") && raw.length > 1;
    const word = negate ? raw.slice(1) : raw;
    const colon = word.indexOf(":");
    const key = colon > 0 ? word.slice(0, colon).toLowerCase() : "";
    const value = colon > 0 ? word.slice(colon + 1).toLowerCase() : word.toLowerCase();
    let test;
    switch (key) {
      case "host": test = (f) => f.host.toLowerCase().includes(value); break;
      case "method": test = (f) => f.method.toLowerCase() === value; break;
      case "status": test = statusTest(value); break;
      case "type": test = (f) => (f.type || "").includes(value); break;
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

/** `404`, `4xx`, `4`, `none` (no response). */
function statusTest(value) {
  if (value === "none" || value === "failed") return (f) => f.status == null;
  const match = /^([1-5])(?:xx)?$/.exec(value);
  if (match) return (f) => f.status != null && Math.floor(f.status / 100) === Number(match[1]);
  return (f) => String(f.status) === value;
}

const urlCache = new WeakMap();
function urlText(f) {
  let text = urlCache.get(f);
  if (text === undefined) {
    text = `${f.scheme}://${f.host}:${f.port}${f.path}${f.query != null ? "?" + f.query : ""}`.toLowerCase();
    urlCache.set(f, text);
  }
  return text;
}
