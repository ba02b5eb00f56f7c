/**
 * The editor's focused window on the page (focus.js chooses the words): the boxes' widths, the
 * windows of the tree and of the members' trees, scrolling a member's box to the selection, and
 * the badge that names the word whose head is being chosen in the whole tree.
 */

import { wordsOf } from "./editor-view.js";
import { focusActive, focusWindow, pinnedWords } from "./focus.js";
import { ELIDED_WIDTH, frameWidth, tokenNode, wordWidth } from "./tree.js";

const COMPACT = 0.72;     // the members' trees' scale (tree.js: compact)

/** Width inside ``box``'s padding (px). */
function room(box) {
  if (!box) return 0;
  const style = getComputedStyle(box);
  return box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
}

/**
 * The focused windows (focus.js) of the tree box ``tree`` and of a member's box ``memberBox``:
 * sets S.visible, S.context (the tree's) and S.memberVisible; null (every word) when focus is off.
 * The boxes' widths are kept in S.rooms (set it to null when they change: a resize, a new view).
 */
export function updateWindow(S, tree, memberBox) {
  if (!focusActive(S.focus, S.words.length)) {
    Object.assign(S, { visible: null, context: null, memberVisible: null });
    return;
  }
  const words = wordsOf(S, S.heads, S.deprels);
  const pinned = pinnedWords(S.heads, S.members, S.ensemble, S.selected, S.pending);
  const scale = typeof S.zoom === "number" ? S.zoom : 1;
  const window = (width, pins = pinned) => focusWindow({ n: words.length, pinned: pins, anchor: S.anchor ?? S.selected,
    width: (id) => wordWidth(words[id - 1]), room: width - frameWidth() - 1, gapWidth: ELIDED_WIDTH });
  const rooms = S.rooms ?? { tree: room(tree), member: 0 };  // measured once: a read after drawing costs a layout
  if (memberBox && !rooms.member) rooms.member = room(memberBox);
  S.rooms = rooms;
  const main = window(rooms.tree / scale);
  S.visible = main.visible;
  S.context = main.context;
  S.memberRoom = memberBox ? rooms.member : 0;
  // the members' windows pin no dependents: moving along the context then seldom changes them
  // (a changed window redraws nine trees; an unchanged one only restyles their arcs)
  const memberPins = memberBox ? pinnedWords(S.heads, S.members, S.ensemble, S.selected, S.pending, false) : null;
  S.memberVisible = memberBox ? window(S.memberRoom / COMPACT, memberPins).visible : main.visible;
}

/**
 * Scroll ``box`` sideways so that word ``id`` of its tree is in the middle, from the drawing's
 * own coordinates and the box's ``width`` measured before drawing: reading the layout back
 * after drawing nine trees would force a layout per key.
 */
export function centreOn(box, id, width) {
  const drawn = box.$tree;
  if (!drawn || !width) return;
  const fits = drawn.total * drawn.scale <= width;
  const left = fits ? 0 : Math.round(Math.max(0, drawn.centres[id] * drawn.scale - width / 2));
  if ((box.$scroll ?? 0) === left) return;  // a write (even of the same value) costs a layout
  box.scrollLeft = left;
  box.$scroll = left;
}

/**
 * While a head is being chosen in the whole tree (the focused window keeps the word drawn), a
 * badge at the tree box's edge names the word when it has scrolled out of view, on its side
 * ("← 12 w12"); a click on the badge scrolls back to it. Reads the layout: call it on scroll
 * and after a click, not per key.
 */
export function renderPendingBadge(S, tree, badge) {
  const token = S.pending && !S.visible ? tokenNode(tree, S.pending) : null;
  let side = null;
  if (token) {
    const box = tree.getBoundingClientRect();
    const word = token.getBoundingClientRect();
    side = word.right < box.left + 8 ? "left" : word.left > box.right - 8 ? "right" : null;
  }
  badge.hidden = !side;
  if (!side) return;
  const name = `${S.pending} ${S.words[S.pending - 1].form}`;
  badge.textContent = side === "left" ? `← choosing the head of ${name}` : `choosing the head of ${name} →`;
  badge.className = `pending-badge ${side}`;
}
