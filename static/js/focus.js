/**
 * The focused window of a long sentence (issue 30): which words the editor draws at a readable
 * size, the rest elided into "… k words …" boxes.
 *
 * A window shows, whatever their distance from each other:
 *   - pinned words: the selected word, the word whose head is being chosen (pending), its current
 *     head, the heads the members propose for it, and its dependents;
 *   - context: a run of consecutive words around an anchor (the selected word, or where the
 *     annotator panned to), as many as the box's width allows.
 * Arcs to an elided word end at its box, so every arc of a shown word is still drawn.
 *
 * The choice (on, off, or automatic: on above FOCUS_WORDS words) is kept per browser in
 * localStorage "arcvote.focus".
 */

import { headCandidates } from "./tree-model.js";

export const FOCUS_WORDS = 40;
const STORAGE_KEY = "arcvote.focus";
const MIN_CONTEXT = 1;      // words each side of the anchor, even when the box is narrower
const EDGE = 2;             // the anchor moves when the selection comes this close to the context's edge

/** "on", "off" or "auto" (the default: on above FOCUS_WORDS words). */
export function storedFocus() {
  const stored = localStorage.getItem(STORAGE_KEY);
  return stored === "on" || stored === "off" ? stored : "auto";
}

/** Whether the focused window is on for an ``n``-word sentence under the choice ``focus``. */
export function focusActive(focus, n) {
  return focus === "on" || (focus === "auto" && n > FOCUS_WORDS);
}

/** The choice after the toggle (from what is shown now), remembered. */
export function toggledFocus(active) {
  const next = active ? "off" : "on";
  localStorage.setItem(STORAGE_KEY, next);
  return next;
}

/**
 * Words 1..n pinned in the window of ``word``: itself, ``pending``, its head, the members' (and
 * the ensemble's) proposed heads and (unless ``dependents`` is false) its dependents. heads[i]
 * is the head of word i+1.
 */
export function pinnedWords(heads, members, ensemble, word, pending = null, dependents = true) {
  const n = heads.length;
  const pinned = new Set([word]);
  if (pending) pinned.add(pending);
  for (const w of [word, pending]) {
    if (!w) continue;
    pinned.add(heads[w - 1]);
    for (const candidate of headCandidates(members, ensemble, w)) pinned.add(candidate.head);
  }
  if (dependents) heads.forEach((head, i) => { if (head === word) pinned.add(i + 1); });
  return new Set([...pinned].filter((w) => Number.isInteger(w) && w >= 1 && w <= n));
}

/** Width of the drawing of ``visible`` (a Set of word ids 1..n): the words plus one box per elided run. */
function drawnWidth(visible, n, width, gapWidth) {
  let total = 0;
  let hidden = false;
  for (let id = 1; id <= n; id += 1) {
    if (visible.has(id)) { total += width(id); hidden = false; } else if (!hidden) { total += gapWidth; hidden = true; }
  }
  return total;
}

/**
 * The window: {visible: Set of ids, context: [lo, hi]}. ``width(id)`` is a word's drawn width,
 * ``room`` the width available (same unit), ``gapWidth`` an elided run's box.
 */
export function focusWindow({ n, pinned, anchor, width, room, gapWidth }) {
  const centre = Math.min(Math.max(anchor, 1), n);
  const visible = new Set(pinned);
  let lo = centre;
  let hi = centre;
  visible.add(centre);
  for (let step = 1; lo > 1 || hi < n; step += 1) {
    const next = step % 2 ? hi + 1 : lo - 1;
    if (next < 1 || next > n) continue;
    const trial = new Set(visible).add(next);
    const must = Math.abs(next - centre) <= MIN_CONTEXT;
    if (!must && drawnWidth(trial, n, width, gapWidth) > room) break;
    visible.add(next);
    if (step % 2) hi = next; else lo = next;
  }
  for (let id = 2; id < n; id += 1) {  // a lone elided word takes about the room of its "… 1 …" box: show it
    if (!visible.has(id) && visible.has(id - 1) && visible.has(id + 1)) visible.add(id);
  }
  return { visible, context: [lo, hi] };
}

/** The anchor after ``word`` is selected: kept while the word sits inside the context, else the word. */
export function followAnchor(anchor, context, word, n) {
  if (!anchor || !context) return word;
  const [lo, hi] = context;
  const inside = word >= lo + (lo > 1 ? EDGE : 0) && word <= hi - (hi < n ? EDGE : 0);
  return inside ? anchor : word;
}

/** The anchor a pan of ``direction`` (+1 right, -1 left) moves to: half a context further, within 1..n. */
export function pannedAnchor(anchor, context, direction, n) {
  const [lo, hi] = context;
  const step = Math.max(1, Math.ceil((hi - lo + 1) / 2));
  return Math.min(Math.max(anchor + direction * step, 1), n);
}
