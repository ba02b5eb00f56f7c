/**
 * The side-by-side view of two sources' trees of one sentence (templates/compare/sentence.html).
 *
 * Reads {words: [{id, form, upos}], sides: [{source, heads, deprels}], direction} from the
 * container's data-compare attribute and draws each side with tree.js (read-only); an arc whose
 * head or label differs from the other side's gets the "differs" class, the others "same".
 */
import { drawTree } from "./tree.js";

const container = document.getElementById("side-by-side");
const { words, sides, direction } = JSON.parse(container.dataset.compare);

function universal(label) {
  return (label ?? "").split(":")[0];
}

function differs(side, other, index) {
  if (!other.heads) return false;
  return side.heads[index] !== other.heads[index] || universal(side.deprels[index]) !== universal(other.deprels[index]);
}

sides.forEach((side, position) => {
  if (!side.heads) return;
  const other = sides[1 - position];
  const tree = words.map((word, index) => ({ ...word, head: side.heads[index], deprel: side.deprels[index] }));
  const changed = new Set(words.filter((_, index) => differs(side, other, index)).map((word) => word.id));
  drawTree(container.querySelector(`[data-side="${position}"]`), tree, direction, {
    arcClass: (word) => (changed.has(word.id) ? "differs" : "same"),
  });
});
