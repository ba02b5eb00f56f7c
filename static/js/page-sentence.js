/** Entry point of the sentence page: draws the tree from #tree's data-words (JSON) and data-direction. */
import { drawTree } from "./tree.js";

const tree = document.getElementById("tree");
drawTree(tree, JSON.parse(tree.dataset.words), tree.dataset.direction);
