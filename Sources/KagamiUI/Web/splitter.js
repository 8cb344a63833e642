// The handle between the list and the inspector: dragged (or moved with the arrow keys) it sets
// the inspector's width, which this browser remembers (localStorage `kagami.inspectorWidth`).
const KEY = "kagami.inspectorWidth";
// The narrowest each side may become.
const INSPECTOR_MIN = 320;
const LIST_MIN = 360;

export function mountSplitter({ handle, inspector, workspace }) {
  const clamp = (width) => Math.round(Math.max(INSPECTOR_MIN, Math.min(width, workspace.clientWidth - LIST_MIN)));
  const apply = (width, keep) => {
    const chosen = clamp(width);
    inspector.style.width = `${chosen}px`;
    handle.setAttribute("aria-valuenow", String(chosen));
    if (keep) {
      try { localStorage.setItem(KEY, String(chosen)); } catch { /* private mode: not kept */ }
    }
  };
  const saved = Number(localStorage.getItem(KEY));
  if (saved > 0) inspector.style.width = `${saved}px`;

  handle.addEventListener("mousedown", (event) => {
    event.preventDefault();
    const right = workspace.getBoundingClientRect().right;
    document.body.classList.add("resizing");
    const move = (e) => apply(right - e.clientX, false);
    const up = (e) => {
      apply(right - e.clientX, true);
      document.body.classList.remove("resizing");
      window.removeEventListener("mousemove", move);
      window.removeEventListener("mouseup", up);
    };
    window.addEventListener("mousemove", move);
    window.addEventListener("mouseup", up);
  });
  handle.addEventListener("keydown", (event) => {
    const step = event.shiftKey ? 100 : 20;
    const width = inspector.getBoundingClientRect().width;
    if (event.key === "ArrowLeft") apply(width + step, true);
    else if (event.key === "ArrowRight") apply(width - step, true);
    else return;
    event.preventDefault();
  });
  // A saved width wider than this window allows gives way as the window narrows.
  new ResizeObserver(() => {
    if (inspector.style.width) inspector.style.width = `${clamp(parseFloat(inspector.style.width))}px`;
  }).observe(workspace);
}
