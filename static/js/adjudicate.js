/**
 * The adjudication page: draw each source's tree (data-tree: {name, words, differs}) with the
 * arcs of the words where the annotators differ marked (class "differs").
 */

import { drawTree } from "./tree.js";

export function drawAdjudication(containers) {
  for (const container of containers) {
    const tree = JSON.parse(container.dataset.tree);
    const differs = new Set(tree.differs);
    drawTree(container, tree.words, container.dataset.direction, {
      compact: true, zoom: "fit", arcClass: (word) => (differs.has(word.id) ? "differs" : ""),
    });
  }
}
