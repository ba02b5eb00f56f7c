/**
 * Entry point of the adjudication page (templates/adjudication/sentence.html): draw each
 * source's tree from its container's data-tree (JSON ``{name, words, differs}``) and
 * data-direction, with the arcs of the words where the annotators differ marked (class
 * "differs"). A module file, not an inline script: the CSP is ``script-src 'self'``.
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

drawAdjudication(document.querySelectorAll(".adjudication-tree"));
