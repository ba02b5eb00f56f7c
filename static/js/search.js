/**
 * The search page's trees (templates/search/page.html).
 *
 * Reads {direction, sentences: [{words: [{id, form, upos, head, deprel}], hits: [{NODE: word id}]}]}
 * from #search-results' data-search attribute and draws each sentence with tree.js (read-only).
 * The words a hit binds get the "grew-match" class and their pattern node's name before the UPOS
 * ("N · NOUN"); an arc between two matched words gets "grew-match-arc".
 */
import { drawTree } from "./tree.js";

const container = document.getElementById("search-results");
const { direction, sentences } = JSON.parse(container.dataset.search);

sentences.forEach((sentence, index) => {
  const names = new Map();
  for (const hit of sentence.hits) {
    for (const [name, id] of Object.entries(hit)) {
      const known = names.get(id) ?? [];
      if (!known.includes(name)) known.push(name);
      names.set(id, known);
    }
  }
  const words = sentence.words.map((word) => (
    names.has(word.id) ? { ...word, upos: `${names.get(word.id).join("/")} · ${word.upos}` } : word));
  drawTree(container.querySelector(`[data-tree="${index}"]`), words, direction, {
    tokenClass: (word) => (names.has(word.id) ? "grew-match" : ""),
    arcClass: (word) => (names.has(word.id) && names.has(word.head) ? "grew-match-arc" : ""),
  });
});
