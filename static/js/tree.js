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
 *
 * A ROOT box stands at the sentence start (left, or right for right-to-left scripts) and the
 * root arc is drawn from it like any other arc (so does an extra arc with head 0).
 *
 * Every string is set with textContent, never as HTML: tokens are untrusted.
 * Long sentences get a wide SVG inside a horizontally scrolling container.
 */

const SVG = "http://www.w3.org/2000/svg";
const LEVEL = 26;        // vertical distance between nested arc levels (px)
const GAP = 18;          // space between words (px)
const FONT = "15px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const SMALL = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const ROOT = "ROOT";

function el(name, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

function measurer() {
  const context = document.createElement("canvas").getContext("2d");
  return (text, font) => {
    context.font = font;
    return context.measureText(text).width;
  };
}

/** Nesting level of every arc: 1 + the highest level of the arcs it spans. */
function arcLevels(words, extra = []) {
  const arcs = words
    .filter((w) => w.head !== null && w.head !== undefined && w.head >= 0)
    .map((w) => ({ dep: w.id, head: w.head, word: w }))
    .concat(extra.filter((a) => a.head !== null && a.head !== undefined && a.head >= 0).map((a) => ({ ...a, extra: true })))
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

/** Centre x of the ROOT box (index 0) and of each word, and the total width. */
function layout(words, direction, measure) {
  const widths = [measure(ROOT, FONT) + 10 + GAP]
    .concat(words.map((w) => Math.max(measure(w.form, FONT), measure(w.upos, SMALL), 24) + GAP));
  const total = widths.reduce((a, b) => a + b, 0) + 2 * GAP;
  const centres = [];
  let x = GAP;
  for (const width of widths) {
    centres.push(direction === "rtl" ? total - (x + width / 2) : x + width / 2);
    x += width;
  }
  return { centres, total };
}

function defaultTitle(word, words) {
  const head = word.head > 0 ? words[word.head - 1].form : "ROOT";
  return `${word.deprel ?? ""}: ${head} → ${word.form}`
    + (word.score !== null && word.score !== undefined ? ` (confidence ${Number(word.score).toFixed(2)})` : "");
}

function drawArc(svg, arc, centres, baseline, words, options, level) {
  const x1 = centres[arc.head];
  const x2 = centres[arc.dep];
  const height = arc.level * level;
  const top = baseline - height;
  const word = arc.word;
  const cls = arc.extra ? `arc extra ${arc.cls ?? ""}` : `arc ${options.arcClass ? options.arcClass(word) : ""}`;
  const root = arc.extra ? "" : arc.head === 0 ? " root" : "";
  const group = el("g", { class: cls + root, "data-dep": arc.dep });
  const title = arc.extra ? arc.title ?? "" : (options.arcTitle ? options.arcTitle(word) : defaultTitle(word, words));
  group.append(el("title", {}, title));
  group.append(el("path", {
    d: `M ${x1} ${baseline} C ${x1} ${top}, ${x2} ${top}, ${x2} ${baseline - 4}`,
    class: "arc-line", "marker-end": arc.extra ? "" : "url(#arrow)",
  }));
  const label = arc.extra ? arc.label ?? "" : word.deprel ?? (arc.head === 0 ? "root" : "");
  group.append(el("text", { x: (x1 + x2) / 2, y: baseline - height * 0.75 - 3, class: "arc-label" }, label));
  svg.append(group);
}

/** The ROOT box at centre ``x``: a button when ``options.onRoot`` is given. */
function rootBox(container, x, baseline, measure, options) {
  const width = measure(ROOT, FONT) + 10;
  const clickable = Boolean(options.onRoot);
  const box = el("g", clickable
    ? { class: "root-node", "data-id": 0, role: "button", tabindex: 0, cursor: "pointer",
      "aria-label": "ROOT: click a word, then ROOT, to make it the root of the sentence" }
    : { class: "root-node", "data-id": 0 });
  box.append(el("title", {}, clickable ? "ROOT (click a word, then here, to attach it to the root; or press 0)" : "ROOT"));
  box.append(el("rect", { x: x - width / 2, y: baseline + 5, width, height: 38, rx: 4, class: "root-box",
    fill: "#eef1f5", stroke: clickable ? "#4b5a75" : "#aab3c2", "stroke-width": 1 }));
  box.append(el("text", { x, y: baseline + 29, class: "root-label", "text-anchor": "middle", fill: "#2d3a52",
    "font-size": 12, "font-weight": 600, "letter-spacing": 1 }, ROOT));
  if (clickable) {
    box.addEventListener("click", (event) => options.onRoot(event));
    box.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      options.onRoot(event);
      if (!container.contains(document.activeElement) && container.tabIndex >= 0) container.focus();
    });
  }
  return box;
}

export function drawTree(container, words, direction = "ltr", options = {}) {
  container.replaceChildren();
  if (!words.length) return;
  const measure = measurer();
  const level = options.compact ? 18 : LEVEL;
  const { centres, total } = layout(words, direction, measure);
  const arcs = arcLevels(words, options.extraArcs ?? []);
  const maxLevel = arcs.reduce((m, a) => Math.max(m, a.level), 0);
  const baseline = (maxLevel + 1.5) * level;
  const height = baseline + 48;
  const scale = options.compact ? 0.72 : 1;
  const interactive = Boolean(options.onToken || options.onRoot);
  const svg = el("svg", {
    width: total * scale, height: height * scale, viewBox: `0 0 ${total} ${height}`,
    role: interactive ? "group" : "img", class: "tree",
    "aria-label": `Dependency tree of ${words.length} words`,
  });
  const defs = el("defs");
  const marker = el("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 4, refY: 8, markerWidth: 7, markerHeight: 7, orient: "auto" });
  marker.append(el("path", { d: "M 0 0 L 4 8 L 8 0 z", class: "arrow-head" }));
  defs.append(marker);
  svg.append(defs);
  for (const arc of arcs) drawArc(svg, arc, centres, baseline, words, options, level);
  svg.append(rootBox(container, centres[0], baseline, measure, options));
  for (const word of words) {
    const x = centres[word.id];
    const token = el("g", { class: `token ${options.tokenClass ? options.tokenClass(word) : ""}`, "data-id": word.id });
    const width = measure(word.form, FONT) + 10;
    token.append(el("rect", { x: x - width / 2, y: baseline + 5, width, height: 38, rx: 4, class: "token-box" }));
    token.append(el("text", { x, y: baseline + 20, class: "form" }, word.form));
    token.append(el("text", { x, y: baseline + 38, class: "upos" }, options.compact ? String(word.id) : word.upos));
    if (options.onToken) token.addEventListener("click", (event) => options.onToken(word.id, event));
    svg.append(token);
  }
  container.append(svg);
  if (direction === "rtl") container.scrollLeft = container.scrollWidth;
}
