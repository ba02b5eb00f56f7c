/**
 * Draw a dependency tree as SVG arcs above the words.
 *
 * drawTree(container, words, direction, options)
 *   words: [{id, form, upos, head, deprel, score}] for words 1..n (head 0 = ROOT, null = none)
 *   direction: "ltr" or "rtl" (right-to-left scripts are laid out from the right edge)
 *   options (all optional, used by the editor):
 *     arcClass(word) -> extra CSS class of a word's arc (e.g. agreement colour)
 *     arcTitle(word) -> hover text of a word's arc (default: label, words, confidence)
 *     tokenClass(word) -> extra CSS class of a word (selected, pending, reviewed)
 *     onToken(id, event) -> called when a word is clicked
 *     onRoot(event) -> called when the ROOT box is clicked (or Enter/Space on it); makes it a button
 *     extraArcs: [{dep, head, label, cls, title}] drawn dashed (other parsers' arcs)
 *     compact: smaller spacing (small multiples)
 *     zoom: a scale (1 = 100%) or "fit" (as wide as the container, never above 100%); the
 *       chosen scale is returned
 *     visible: a Set of the word ids to draw (a focused window, focus.js); each run of other
 *       words is one "… k …" box; a shown word's arc to an elided head ends at its run's box, the
 *       arcs of elided words are not drawn
 *     onGap(from, to, event) -> called when such a box (words from..to) is clicked
 *
 * A ROOT box stands at the sentence start (left, or right for right-to-left scripts) and the
 * root arc is drawn from it like any other arc (so does an extra arc with head 0).
 *
 * Every string is set with textContent, never as HTML: tokens are untrusted.
 * Long sentences get a wide SVG inside a horizontally scrolling container, unless zoomed out.
 */

const SVG = "http://www.w3.org/2000/svg";
const LEVEL = 26;        // vertical distance between nested arc levels (px)
const GAP = 18;          // space between words (px)
const FONT = "15px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const SMALL = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const ROOT = "ROOT";
const GAP_BOX = 64;      // width of the box of an elided run of words (px, spacing included)

function el(name, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

let context = null;
const widths = new Map();

/** Text width in px, cached per (font, text): redrawing a 100-word tree measures nothing twice. */
function measure(text, font) {
  const key = `${font}\u0000${text}`;
  let width = widths.get(key);
  if (width === undefined) {
    context ??= document.createElement("canvas").getContext("2d");
    context.font = font;
    width = context.measureText(text).width;
    widths.set(key, width);
  }
  return width;
}


/** Drawn width of a word (px at 100%, spacing included): the window of focus.js is sized with it. */
export function wordWidth(word) {
  return Math.max(measure(word.form, FONT), measure(word.upos, SMALL), 24) + GAP;
}

/** Width of the box standing for an elided run of words (px at 100%). */
export const ELIDED_WIDTH = GAP_BOX;

/** Width a drawing takes besides its words and elided runs: the ROOT box and the margins (px at 100%). */
export function frameWidth() {
  return measure(ROOT, FONT) + 10 + GAP + 2 * GAP;
}

/** Nesting level of every arc: 1 + the highest level of the arcs it spans (only the arcs of shown words). */
function arcLevels(words, extra = [], visible = null) {
  const shown = (a) => !visible || visible.has(a.dep);
  const arcs = words
    .filter((w) => w.head !== null && w.head !== undefined && w.head >= 0)
    .map((w) => ({ dep: w.id, head: w.head, word: w }))
    .concat(extra.filter((a) => a.head !== null && a.head !== undefined && a.head >= 0).map((a) => ({ ...a, extra: true })))
    .filter(shown)
    .map((a) => ({ ...a, lo: Math.min(a.dep, a.head), hi: Math.max(a.dep, a.head) }))
    .sort((a, b) => (a.hi - a.lo) - (b.hi - b.lo));
  for (const arc of arcs) {
    arc.level = 1;
    for (const inner of arcs) {
      if (inner === arc || inner.level === undefined) continue;
      if (inner.lo >= arc.lo && inner.hi <= arc.hi) arc.level = Math.max(arc.level, inner.level + 1);
    }
  }
  return arcs;
}

/** Slots left to right: the ROOT box, each shown word, and one per run of elided words. */
function slotsOf(words, visible) {
  const slots = [{ width: measure(ROOT, FONT) + 10 + GAP, ids: [0] }];
  for (const word of words) {
    if (!visible || visible.has(word.id)) slots.push({ width: wordWidth(word), ids: [word.id] });
    else if (slots.at(-1).elided) slots.at(-1).ids.push(word.id);
    else slots.push({ width: GAP_BOX, ids: [word.id], elided: true });
  }
  return slots;
}

/**
 * Centre x of the ROOT box (index 0) and of each word (an elided word: its run's box), the total
 * width and the elided runs [{from, to, x}].
 */
function layout(words, direction, visible = null) {
  const slots = slotsOf(words, visible);
  const total = slots.reduce((sum, slot) => sum + slot.width, 0) + 2 * GAP;
  const centres = new Array(words.length + 1);
  const elided = [];
  let x = GAP;
  for (const slot of slots) {
    const centre = direction === "rtl" ? total - (x + slot.width / 2) : x + slot.width / 2;
    for (const id of slot.ids) centres[id] = centre;
    if (slot.elided) elided.push({ from: slot.ids[0], to: slot.ids.at(-1), x: centre });
    x += slot.width;
  }
  return { centres, total, elided };
}

/** The box of elided words from..to at centre ``x``: clicking it calls ``options.onGap``. */
function elidedBox(run, options) {
  const count = run.to - run.from + 1;
  const width = GAP_BOX - GAP / 2;
  const box = el("g", { class: "elided", "data-from": run.from, "data-to": run.to, role: "button", tabindex: -1 });
  box.append(el("title", {}, `${count} word${count === 1 ? "" : "s"} not shown (${run.from}–${run.to}): click to show them`));
  box.append(el("rect", { x: run.x - width / 2, y: 9, width, height: 30, rx: 4, class: "elided-box" }));
  box.append(el("text", { x: run.x, y: 29, class: "elided-count" }, `… ${count} …`));
  if (options.onGap) box.addEventListener("click", (event) => options.onGap(run.from, run.to, event));
  return box;
}

function defaultTitle(word, words) {
  const head = word.head > 0 ? words[word.head - 1].form : "ROOT";
  return `${word.deprel ?? ""}: ${head} → ${word.form}`
    + (word.score !== null && word.score !== undefined ? ` (confidence ${Number(word.score).toFixed(2)})` : "");
}

/** What an arc looks like (coordinates relative to the baseline of the words). */
function arcLook(arc, centres, words, options, level) {
  const x1 = centres[arc.head];
  const x2 = centres[arc.dep];
  const height = arc.level * level;
  const word = arc.word;
  const cls = arc.extra ? `arc extra ${arc.cls ?? ""}` : `arc ${options.arcClass ? options.arcClass(word) : ""}`;
  const root = arc.extra ? "" : arc.head === 0 ? " root" : "";
  return {
    cls: cls + root,
    title: arc.extra ? arc.title ?? "" : (options.arcTitle ? options.arcTitle(word) : defaultTitle(word, words)),
    d: `M ${x1} 0 C ${x1} ${-height}, ${x2} ${-height}, ${x2} -4`,
    label: arc.extra ? arc.label ?? "" : word.deprel ?? (arc.head === 0 ? "root" : ""),
    x: (x1 + x2) / 2,
    y: -height * 0.75 - 3,
  };
}

function drawArc(layer, arc, look) {
  const group = el("g", { class: look.cls, "data-dep": arc.dep });
  const title = el("title", {}, look.title);
  const path = el("path", { d: look.d, class: "arc-line", "marker-end": arc.extra ? "" : "url(#arrow)" });
  const text = el("text", { x: look.x, y: look.y, class: "arc-label" }, look.label);
  group.append(title, path, text);
  layer.append(group);
  return { group, title, path, text, look };
}

/** Bring a drawn arc to ``look``, touching only what changed. */
function patchArc(drawn, look) {
  const old = drawn.look;
  if (old.cls !== look.cls) drawn.group.setAttribute("class", look.cls);
  if (old.title !== look.title) drawn.title.textContent = look.title;
  if (old.d !== look.d) drawn.path.setAttribute("d", look.d);
  if (old.label !== look.label) drawn.text.textContent = look.label;
  if (old.x !== look.x) drawn.text.setAttribute("x", look.x);
  if (old.y !== look.y) drawn.text.setAttribute("y", look.y);
  drawn.look = look;
}

/** The ROOT box at centre ``x``: a button when ``options.onRoot`` is given. */
function rootBox(container, x, measure, options) {
  const width = measure(ROOT, FONT) + 10;
  const clickable = Boolean(options.onRoot);
  const box = el("g", clickable
    ? { class: "root-node", "data-id": 0, role: "button", tabindex: 0, cursor: "pointer",
      "aria-label": "ROOT: click a word, then ROOT, to make it the root of the sentence" }
    : { class: "root-node", "data-id": 0 });
  box.append(el("title", {}, clickable ? "ROOT (click a word, then here, to attach it to the root; or press 0)" : "ROOT"));
  box.append(el("rect", { x: x - width / 2, y: 5, width, height: 38, rx: 4, class: "root-box",
    fill: "#eef1f5", stroke: clickable ? "#4b5a75" : "#aab3c2", "stroke-width": 1 }));
  box.append(el("text", { x, y: 29, class: "root-label", "text-anchor": "middle", fill: "#2d3a52",
    "font-size": 12, "font-weight": 600, "letter-spacing": 1 }, ROOT));
  if (clickable) {
    box.addEventListener("click", (event) => options.onRoot(event));
    box.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      options.onRoot(event);
      if (container.tabIndex >= 0) container.focus();  // back to the tree's keys (the box may be redrawn)
    });
  }
  return box;
}

function treeKey(words, direction, options) {
  const visible = options.visible ? [...options.visible].sort((a, b) => a - b).join(",") : "all";
  return JSON.stringify([direction, Boolean(options.compact), options.zoom ?? 1, visible, words.map((w) => [w.form, w.upos])]);
}

/**
 * Draw the tree, or, when ``container`` already shows the same words at the same zoom (and
 * neither drawing has extra arcs), change only the arcs and word classes that differ: a
 * key press on a 100-word sentence then rebuilds nothing. Returns the scale drawn at.
 */
export function drawTree(container, words, direction = "ltr", options = {}) {
  const drawn = container.$tree;
  const extra = options.extraArcs ?? [];
  if (drawn && !extra.length && !drawn.extra && drawn.key === treeKey(words, direction, options)
      && container.contains(drawn.svg)) {
    updateDrawn(drawn, words, options);
    return drawn.scale;
  }
  return drawFresh(container, words, direction, options);
}

function drawFresh(container, words, direction, options) {
  container.replaceChildren();
  container.$tree = null;
  if (!words.length) return 1;
  const level = options.compact ? 18 : LEVEL;
  const visible = options.visible ?? null;
  const { centres, total, elided } = layout(words, direction, visible);
  const scale = options.compact ? 0.72 : zoomScale(options.zoom, container, total);
  const interactive = Boolean(options.onToken || options.onRoot);
  const svg = el("svg", {
    role: interactive ? "group" : "img", class: "tree", "aria-label": `Dependency tree of ${words.length} words`,
  });
  const defs = el("defs");
  const marker = el("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 4, refY: 8, markerWidth: 7, markerHeight: 7, orient: "auto" });
  marker.append(el("path", { d: "M 0 0 L 4 8 L 8 0 z", class: "arrow-head" }));
  defs.append(marker);
  const plot = el("g", { class: "plot" });
  const arcLayer = el("g", { class: "arcs" });
  plot.append(arcLayer, rootBox(container, centres[0], measure, options));
  for (const run of elided) plot.append(elidedBox(run, options));
  const tokens = new Map();
  for (const word of words) {
    if (visible && !visible.has(word.id)) continue;
    const x = centres[word.id];
    const cls = `token ${options.tokenClass ? options.tokenClass(word) : ""}`;
    const token = el("g", { class: cls, "data-id": word.id });
    const width = measure(word.form, FONT) + 10;
    token.append(el("rect", { x: x - width / 2, y: 5, width, height: 38, rx: 4, class: "token-box" }));
    token.append(el("text", { x, y: 20, class: "form" }, word.form));
    token.append(el("text", { x, y: 38, class: "upos" }, options.compact ? String(word.id) : word.upos));
    if (options.onToken) token.addEventListener("click", (event) => options.onToken(word.id, event));
    plot.append(token);
    tokens.set(word.id, { node: token, cls });
  }
  svg.append(defs, plot);
  const state = { key: treeKey(words, direction, options), extra: Boolean(options.extraArcs?.length), svg, plot,
    arcLayer, tokens, arcs: new Map(), centres, total, level, scale, baseline: null, visible };
  updateDrawn(state, words, options);
  container.append(svg);
  container.$tree = state;
  if (direction === "rtl") container.scrollLeft = container.scrollWidth;
  return scale;
}

/** Arcs (levels, paths, labels, classes), word classes and the height of a drawn tree. */
function updateDrawn(state, words, options) {
  const arcs = arcLevels(words, options.extraArcs ?? [], state.visible);
  const maxLevel = arcs.reduce((m, a) => Math.max(m, a.level), 0);
  const baseline = (maxLevel + 1.5) * state.level;
  if (baseline !== state.baseline) {
    const height = baseline + 48;
    state.svg.setAttribute("width", state.total * state.scale);
    state.svg.setAttribute("height", height * state.scale);
    state.svg.setAttribute("viewBox", `0 0 ${state.total} ${height}`);
    state.plot.setAttribute("transform", `translate(0 ${baseline})`);
    state.baseline = baseline;
  }
  const seen = new Set();
  arcs.forEach((arc, i) => {
    const key = arc.extra ? `x${i}` : arc.dep;
    seen.add(key);
    const look = arcLook(arc, state.centres, words, options, state.level);
    const drawn = state.arcs.get(key);
    if (drawn) patchArc(drawn, look);
    else state.arcs.set(key, drawArc(state.arcLayer, arc, look));
  });
  for (const [key, drawn] of state.arcs) {
    if (!seen.has(key)) { drawn.group.remove(); state.arcs.delete(key); }
  }
  if (!options.tokenClass) return;
  for (const word of words) {
    const token = state.tokens.get(word.id);
    if (!token) continue;
    const cls = `token ${options.tokenClass(word)}`;
    if (token.cls !== cls) {
      for (const name of token.cls.split(" ")) if (name) token.node.classList.remove(name);
      for (const name of cls.split(" ")) if (name) token.node.classList.add(name);
      token.cls = cls;
    }
  }
}

/** The word elements of a drawn tree by word id (for highlighting without redrawing). */
export function tokenNode(container, id) {
  return container.$tree?.tokens.get(id)?.node ?? null;
}

function zoomScale(zoom, container, total) {
  if (zoom === "fit") {
    const style = getComputedStyle(container);
    const room = container.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return room > 0 ? Math.min(1, room / total) : 1;
  }
  return typeof zoom === "number" && zoom > 0 ? zoom : 1;
}
