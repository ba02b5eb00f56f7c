/**
 * Pure tree logic for the editor: validation (the same rules as app/services/validation.py),
 * projectivity, member agreement, ranked head/label candidates, and an undo/redo history.
 *
 * Trees are {heads, deprels} over words 1..n (heads[i-1] is the head of word i, 0 = ROOT); word
 * columns are {upos, xpos, lemma, feats}, one string per word (edited in word-fields.js).
 */

export function findCycle(heads) {
  const n = heads.length;
  const state = new Array(n + 1).fill(0);
  for (let start = 1; start <= n; start += 1) {
    const path = [];
    let word = start;
    while (word > 0 && word <= n && state[word] === 0) {
      state[word] = 1;
      path.push(word);
      word = heads[word - 1];
    }
    if (word > 0 && word <= n && state[word] === 1) return path.slice(path.indexOf(word));
    for (const visited of path) state[visited] = 2;
  }
  return null;
}

/** How an unknown label gets accepted (the same words as UNKNOWN_LABEL_HINT in app/services/validation.py). */
export const UNKNOWN_LABEL_HINT = "not in this treebank's labels: a curator adds it on the treebank's Settings page";

/** Errors [{word, code, message}] that stop a save; mirrors validate_tree on the server. */
export function validate(heads, deprels, labels) {
  const n = heads.length;
  const errors = [];
  heads.forEach((head, i) => {
    if (head === null || head === undefined) errors.push({ word: i + 1, code: "no-head", message: `word ${i + 1} has no head` });
    else if (head < 0 || head > n || head === i + 1) errors.push({ word: i + 1, code: "bad-head", message: `word ${i + 1} cannot attach to ${head}` });
  });
  if (errors.length) return errors;
  const roots = heads.flatMap((h, i) => (h === 0 ? [i + 1] : []));
  if (roots.length !== 1) {
    errors.push({ word: roots[1] ?? 0, code: "roots", message: `exactly one word must attach to ROOT (found ${roots.join(", ") || "none"})` });
  }
  const cycle = findCycle(heads);
  if (cycle) errors.push({ word: cycle[0], code: "cycle", message: `cycle: ${[...cycle, cycle[0]].join(" → ")}` });
  const known = new Set(labels);
  deprels.forEach((label, i) => {
    const word = i + 1;
    if (!label || label === "_") errors.push({ word, code: "no-label", message: `word ${word} has no label` });
    else if (!known.has(label)) errors.push({ word, code: "label", message: `unknown label '${label}' on word ${word} (${UNKNOWN_LABEL_HINT})` });
    else if ((label === "root") !== (heads[i] === 0)) {
      errors.push({ word, code: "root-label", message: `word ${word}: only the word attached to ROOT is labelled root` });
    }
  });
  return errors;
}

/** Words whose arc crosses another arc (ROOT arcs included). */
export function nonProjective(heads) {
  const arcs = heads.flatMap((h, i) => (h === null || h === undefined ? [] : [[Math.min(i + 1, h), Math.max(i + 1, h), i + 1]]));
  const crossing = new Set();
  for (const [lo, hi, word] of arcs) {
    for (const [lo2, hi2, word2] of arcs) {
      if (lo < lo2 && lo2 < hi && hi < hi2) { crossing.add(word); crossing.add(word2); }
    }
  }
  return [...crossing].sort((a, b) => a - b);
}

/**
 * Words 1..n top-down: by depth in the tree (the root word first, then its dependents, ...),
 * left to right within a depth; words whose head chain never reaches ROOT (a cycle being
 * edited, a missing head) come last. heads[i] is the head of word i+1 (0 = ROOT).
 */
export function topDownOrder(heads) {
  const n = heads.length;
  const depth = new Array(n + 1).fill(undefined);
  depth[0] = 0;
  const depthOf = (word) => {
    const path = [];
    let node = word;
    while (node >= 1 && node <= n && depth[node] === undefined && !path.includes(node)) {
      path.push(node);
      node = heads[node - 1];
    }
    const base = Number.isInteger(node) && node >= 0 && node <= n && Number.isFinite(depth[node]) ? depth[node] : Infinity;
    path.reverse().forEach((w, i) => { depth[w] = base + i + 1; });
    return depth[word];
  };
  const words = Array.from({ length: n }, (_, i) => i + 1);
  words.forEach(depthOf);
  return words.sort((a, b) => depth[a] - depth[b] || a - b);
}

/** How the members relate to a head: "agree" (all), "majority" (> half), "split", or "none". */
export function agreement(members, word, head) {
  if (!members.length) return "none";
  const votes = members.filter((m) => m.heads[word - 1] === head).length;
  if (votes === members.length) return "agree";
  return votes * 2 > members.length ? "majority" : "split";
}

/**
 * Words whose arc in the ensemble's tree the round's arc error detector flags (issue #32): the ids
 * of the words whose ``p_wrong`` (words 1..n) is at least ``threshold``; none without scores.
 */
export function flaggedWords(pWrong, threshold) {
  if (!Array.isArray(pWrong) || typeof threshold !== "number") return new Set();
  return new Set(pWrong.flatMap((p, i) => (typeof p === "number" && p >= threshold ? [i + 1] : [])));
}

/** Whether every member proposes the same head and label for the word. */
export function membersAgree(members, word) {
  if (members.length < 2) return true;
  const [first, ...rest] = members;
  return rest.every((m) => m.heads[word - 1] === first.heads[word - 1] && m.deprels[word - 1] === first.deprels[word - 1]);
}

/** Heads proposed for a word, most votes first: [{head, votes, names}]. */
export function headCandidates(members, ensemble, word) {
  const tally = new Map();
  for (const member of members) {
    const head = member.heads[word - 1];
    const entry = tally.get(head) ?? { head, votes: 0, names: [] };
    entry.votes += 1;
    entry.names.push(member.name);
    tally.set(head, entry);
  }
  if (ensemble && !tally.has(ensemble.heads[word - 1])) {
    tally.set(ensemble.heads[word - 1], { head: ensemble.heads[word - 1], votes: 0, names: ["ensemble"] });
  }
  return [...tally.values()].sort((a, b) => b.votes - a.votes || a.head - b.head);
}

/** Labels for a word: the members' (most votes first, those with the chosen head first), then the rest. */
export function labelCandidates(members, word, head, labels) {
  const score = new Map();
  for (const member of members) {
    const label = member.deprels[word - 1];
    const bonus = member.heads[word - 1] === head ? 10 : 1;
    score.set(label, (score.get(label) ?? 0) + bonus);
  }
  const ranked = [...score.keys()].filter((l) => l && l !== "_").sort((a, b) => score.get(b) - score.get(a));
  return [...ranked, ...labels.filter((l) => !score.has(l))];
}

/**
 * The label to offer for a word that gets ``head``: the label most members give the word with
 * that head, else the word's most frequent non-root label among the members, else "dep".
 */
export function suggestLabel(members, word, head) {
  const top = (votes) => [...votes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const withHead = new Map();
  const any = new Map();
  for (const member of members) {
    const label = member.deprels[word - 1];
    if (!label || label === "_" || label === "root") continue;
    any.set(label, (any.get(label) ?? 0) + 1);
    if (member.heads[word - 1] === head) withHead.set(label, (withHead.get(label) ?? 0) + 1);
  }
  return top(withHead) ?? top(any) ?? "dep";
}

/** Whether two trees ({heads, deprels, reviewed: Set, columns?}) are the same. */
export function sameTree(a, b) {
  return a.heads.length === b.heads.length && a.heads.every((h, i) => h === b.heads[i] && a.deprels[i] === b.deprels[i])
    && a.reviewed.size === b.reviewed.size && [...a.reviewed].every((w) => b.reviewed.has(w))
    && sameColumns(a.columns, b.columns);
}

/** The word columns an annotator edits besides the tree. */
export const COLUMNS = ["upos", "xpos", "lemma", "feats"];

/** A copy of {column: [values]} (snapshots for undo must not share arrays). */
export function cloneColumns(columns) {
  return Object.fromEntries(COLUMNS.map((c) => [c, [...columns[c]]]));
}

/** Whether two {column: [values]} are equal (both missing counts as equal). */
export function sameColumns(a, b) {
  if (!a || !b) return a === b;
  return COLUMNS.every((c) => a[c].length === b[c].length && a[c].every((v, i) => v === b[c][i]));
}

/** Words (1-based) whose column values differ between two {column: [values]}. */
export function columnWords(a, b) {
  if (!a || !b) return [];
  return a.upos.map((_, i) => i + 1).filter((w) => COLUMNS.some((c) => a[c][w - 1] !== b[c][w - 1]));
}

/** FEATS with the pair "Name=Value" set (replacing that name), sorted by name as UD wants. */
export function mergeFeature(feats, pair) {
  const name = pair.split("=")[0];
  const kept = feats === "_" || !feats ? [] : feats.split("|").filter((f) => f.split("=")[0] !== name);
  const key = (f) => f.toLowerCase();
  return [...kept, pair].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)).join("|");
}

/** Undo/redo over snapshots of {heads, deprels, reviewed}. */
export class History {
  constructor(limit = 200) { this.done = []; this.undone = []; this.limit = limit; }
  push(snapshot) {
    this.done.push(snapshot);
    if (this.done.length > this.limit) this.done.shift();
    this.undone = [];
  }
  undo(current) {
    if (!this.done.length) return null;
    this.undone.push(current);
    return this.done.pop();
  }
  redo(current) {
    if (!this.undone.length) return null;
    this.done.push(current);
    return this.undone.pop();
  }
}
