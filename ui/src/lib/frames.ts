/** Frame timing, with a timer where the page has no animation frames (tests). */

/** Runs `cb` in the next animation frame, before it is painted. */
export function nextFrame(cb: () => void) {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => cb());
  else setTimeout(cb, 16);
}

/** Runs `cb` once the next frame has been painted. */
export function afterPaint(cb: () => void) {
  nextFrame(() => setTimeout(cb, 0));
}
