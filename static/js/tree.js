/**
 * Draw a dependency tree as SVG arcs above the words.
 *
 * drawTree(container, words, direction)
 *   words: [{id, form, upos, head, deprel, score}] for words 1..n (head 0 = ROOT, null = none)
 *   direction: "ltr" or "rtl" (right-to-left scripts are laid out from the right edge)
 *
 * Every string is set with textContent, never as HTML: tokens are untrusted.
 * Long sentences get a wide SVG inside a horizontally scrolling container.
 */

const SVG = "http://www.w3.org/2000/svg";
const LEVEL = 26;        // vertical distance between nested arc levels (px)
const GAP = 18;          // space between words (px)
const FONT = "15px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const SMALL = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

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
function arcLevels(words) {
  const arcs = words
    .filter((w) => w.head !== null && w.head > 0)
    .map((w) => ({ dep: w.id, head: w.head, lo: Math.min(w.id, w.head), hi: Math.max(w.id, w.head) }))
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

/** Centre x of each word (index 0 unused) and the total width. */
function layout(words, direction, measure) {
  const widths = words.map((w) => Math.max(measure(w.form, FONT), measure(w.upos, SMALL), 24) + GAP);
  const total = widths.reduce((a, b) => a + b, 0) + 2 * GAP;
  const centres = [0];
  let x = GAP;
  for (const width of widths) {
    centres.push(direction === "rtl" ? total - (x + width / 2) : x + width / 2);
    x += width;
  }
  return { centres, total };
}

function drawArc(svg, arc, centres, baseline, words) {
  const x1 = centres[arc.head];
  const x2 = centres[arc.dep];
  const height = arc.level * LEVEL;
  const top = baseline - height;
  const word = words[arc.dep - 1];
  const group = el("g", { class: "arc" });
  const title = `${word.deprel ?? ""}: ${words[arc.head - 1].form} → ${word.form}`
    + (word.score !== null && word.score !== undefined ? ` (confidence ${Number(word.score).toFixed(2)})` : "");
  group.append(el("title", {}, title));
  group.append(el("path", {
    d: `M ${x1} ${baseline} C ${x1} ${top}, ${x2} ${top}, ${x2} ${baseline - 4}`,
    class: "arc-line", "marker-end": "url(#arrow)",
  }));
  group.append(el("text", { x: (x1 + x2) / 2, y: baseline - height * 0.75 - 3, class: "arc-label" }, word.deprel ?? ""));
  svg.append(group);
}

export function drawTree(container, words, direction = "ltr") {
  container.replaceChildren();
  if (!words.length) return;
  const measure = measurer();
  const { centres, total } = layout(words, direction, measure);
  const arcs = arcLevels(words);
  const maxLevel = arcs.reduce((m, a) => Math.max(m, a.level), 0);
  const baseline = (maxLevel + 1.5) * LEVEL;
  const height = baseline + 48;
  const svg = el("svg", {
    width: total, height, viewBox: `0 0 ${total} ${height}`, role: "img", class: "tree",
    "aria-label": `Dependency tree of ${words.length} words`,
  });
  const defs = el("defs");
  const marker = el("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 4, refY: 8, markerWidth: 7, markerHeight: 7, orient: "auto" });
  marker.append(el("path", { d: "M 0 0 L 4 8 L 8 0 z", class: "arrow-head" }));
  defs.append(marker);
  svg.append(defs);
  for (const arc of arcs) drawArc(svg, arc, centres, baseline, words);
  for (const word of words) {
    const x = centres[word.id];
    if (word.head === 0) {
      const root = el("g", { class: "arc root" });
      root.append(el("title", {}, `root: ${word.form}`));
      root.append(el("line", { x1: x, y1: 6, x2: x, y2: baseline - 4, class: "arc-line", "marker-end": "url(#arrow)" }));
      root.append(el("text", { x, y: 14, class: "arc-label" }, word.deprel ?? "root"));
      svg.append(root);
    }
    const token = el("g", { class: "token" });
    token.append(el("text", { x, y: baseline + 20, class: "form" }, word.form));
    token.append(el("text", { x, y: baseline + 38, class: "upos" }, word.upos));
    svg.append(token);
  }
  container.append(svg);
  if (direction === "rtl") container.scrollLeft = container.scrollWidth;
}
