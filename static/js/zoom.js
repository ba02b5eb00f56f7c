/**
 * The editor's tree zoom: the steps, the next step from the drawn scale, and the choice kept per
 * browser (localStorage "arcvote.zoom": a scale, or "fit" for the box's width).
 */

const ZOOMS = [0.25, 0.35, 0.5, 0.65, 0.8, 1, 1.25, 1.5];

/** The zoom this browser chose last (1 without one). */
export function storedZoom() {
  const stored = localStorage.getItem("arcvote.zoom");
  return stored === "fit" ? "fit" : Number(stored) > 0 ? Number(stored) : 1;
}

/** The zoom after a step: +1 / -1 from the drawn `scale`, or "fit" (toggled back to 1); kept. */
export function nextZoom(zoom, scale, step) {
  const next = step === "fit" ? (zoom === "fit" ? 1 : "fit")
    : step > 0 ? ZOOMS.find((z) => z > scale + 1e-6) ?? ZOOMS.at(-1)
      : ZOOMS.findLast((z) => z < scale - 1e-6) ?? ZOOMS[0];
  localStorage.setItem("arcvote.zoom", String(next));
  return next;
}
