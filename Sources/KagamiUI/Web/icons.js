// The page's icons as inline SVG: they draw the same with any fonts installed (an emoji lock
// is an empty box on a machine without an emoji font), follow the text colour and size, and
// are hidden from screen readers (the element around them carries the words).
const PATHS = {
  // A padlock: body and shackle.
  lock: "M4 7V5a4 4 0 0 1 8 0v2h1v8H3V7h1zm2 0h4V5a2 2 0 0 0-4 0v2z",
  // Three lines: the columns menu.
  menu: "M2 3h12v2H2zm0 4h12v2H2zm0 4h12v2H2z",
  // Three dots: an exchange's or a node's actions.
  more: "M2 7h2.5v2.5H2zm4.75 0h2.5v2.5h-2.5zM11.5 7H14v2.5h-2.5z",
  check: "M6.2 11.2 2.8 7.8 1.4 9.2l4.8 4.8L14.6 5.6l-1.4-1.4z",
  cross: "M3.4 2 8 6.6 12.6 2 14 3.4 9.4 8l4.6 4.6-1.4 1.4L8 9.4 3.4 14 2 12.6 6.6 8 2 3.4z",
};

const SVG = "http://www.w3.org/2000/svg";

/** An `<svg class="icon icon-NAME">` of one of PATHS, 1em square. */
export function icon(name) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("class", `icon icon-${name}`);
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", PATHS[name]);
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}
