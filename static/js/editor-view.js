/**
 * Rendering for the sentence editor (static/js/editor.js owns the state and the keys).
 * Every string from the data is set with textContent: tokens and notes are untrusted.
 */

import { centreOn } from "./editor-window.js";
import { focusActive } from "./focus.js";
import { drawTree, tokenNode } from "./tree.js";
import { agreement, headCandidates, labelCandidates, membersAgree, nonProjective } from "./tree-model.js";
import { reparseNote } from "./reparse.js";

export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export function wordsOf(S, heads, deprels, scores = null) {
  return S.words.map((w, i) => ({
    id: w.id, form: w.form, upos: S.columns.upos[i], head: heads[i], deprel: deprels[i], score: scores ? scores[i] : null,
  }));
}

function headName(S, head) {
  return head === 0 ? "ROOT" : head ? `${head} ${S.words[head - 1]?.form ?? "?"}` : "—";
}

function share(S, word) {
  const e = S.ensemble;
  if (!e || !e.scores || e.heads[word - 1] !== S.heads[word - 1]) return null;
  return e.scores[word - 1];
}

function arcTitle(S, word) {
  const votes = S.members.filter((m) => m.heads[word.id - 1] === word.head).map((m) => m.name);
  const vote = share(S, word.id);
  return `${word.deprel ?? "?"}: ${headName(S, word.head)} → ${word.form}`
    + (S.members.length ? ` · ${votes.length} of ${S.members.length} members (${votes.join(", ") || "none"})` : "")
    + (vote !== null ? ` · vote share ${vote.toFixed(2)}` : "") + detectorNote(S, word.id);
}

/** " · error detector: p_wrong 0.73 (flagged)" for a word the round's detector scored, else "". */
function detectorNote(S, word) {
  const p = S.pWrong?.[word - 1];
  return typeof p === "number" ? ` · error detector: p_wrong ${p.toFixed(2)}${S.flagged.has(word) ? " (flagged)" : ""}` : "";
}

/** Draw the current tree; returns the scale it was drawn at (S.zoom may be "fit"). */
export function renderTree(S, container, onToken, onRoot, onGap) {
  const extraArcs = S.view === "overlay" ? overlayArcs(S) : [];
  return drawTree(container, wordsOf(S, S.heads, S.deprels), S.direction, {
    zoom: S.zoom,
    visible: S.visible,
    onGap,
    arcClass: (w) => `agree-${agreement(S.members, w.id, w.head)}${S.errorWords.has(w.id) ? " invalid" : ""}${S.reparsed.has(w.id) ? " reparsed" : ""}`,
    arcTitle: (w) => arcTitle(S, w) + (S.reparsed.has(w.id) ? " · changed by the re-parse" : ""),
    tokenClass: (w) => [S.reviewed.has(w.id) ? "reviewed" : "", S.errorWords.has(w.id) ? "invalid" : "",
      S.reparsed.has(w.id) ? "reparsed" : "", S.flagged.has(w.id) ? "flagged" : ""].join(" "),
    onToken,
    onRoot,
    extraArcs,
  });
}

/** Move the selected/pending highlight in the tree, the members' trees and the table (no search). */
export function markSelection(S, root) {
  for (const node of root.$marked ?? []) node.classList.remove("selected", "pending");
  const marked = [];
  const mark = (node, cls) => { if (node) { node.classList.add(cls); marked.push(node); } };
  const tree = root.querySelector("#tree");
  mark(tokenNode(tree, S.selected), "selected");
  if (S.pending) mark(tokenNode(tree, S.pending), "pending");
  for (const box of root.querySelectorAll("#members .tree-scroll")) mark(tokenNode(box, S.selected), "selected");
  mark(root.querySelector("#tokens").tBodies[0]?.rows[S.selected - 1], "selected");
  root.$marked = marked;
}

/** Zoom buttons: the current scale, "fit" pressed when the tree follows the box's width. */
export function renderZoom(S, root) {
  const level = root.querySelector("#zoom-level");
  if (level) level.textContent = `${Math.round(S.scale * 100)}%`;
  root.querySelector("#zoom-fit")?.setAttribute("aria-pressed", String(S.zoom === "fit"));
}

function differsFrom(S, tree, i) {
  return tree.heads[i] !== S.heads[i] || tree.deprels[i] !== S.deprels[i];
}

/**
 * The members' arcs that differ from the current tree, one dashed arc per distinct proposal
 * (head and label) with the members that make it: "obl · graph1 +2". With the focused window
 * on, only the selected word's: nine members' proposals for 100 words are unreadable at once.
 */
function overlayArcs(S) {
  const proposals = new Map();
  const words = focusActive(S.focus, S.words.length) ? [S.selected] : S.words.map((w) => w.id);
  S.members.forEach((member, m) => {
    if (!S.overlay.has(member.name)) return;
    for (const word of words) {
      const i = word - 1;
      const head = member.heads[i];
      if (head === S.heads[i] && member.deprels[i] === S.deprels[i]) continue;
      const key = `${word} ${head} ${member.deprels[i]}`;
      const entry = proposals.get(key) ?? { dep: word, head, deprel: member.deprels[i], cls: `member-${m % 6}`, names: [] };
      entry.names.push(member.name);
      proposals.set(key, entry);
    }
  });
  return [...proposals.values()].map((p) => ({
    dep: p.dep, head: p.head, cls: p.cls,
    label: `${p.deprel} · ${p.names[0]}${p.names.length > 1 ? ` +${p.names.length - 1}` : ""}`,
    title: `${p.names.join(", ")}: ${p.deprel} ${headName(S, p.head)} → ${S.words[p.dep - 1].form}`,
  }));
}

/**
 * The members' view: small multiples (a figure per member with a scrolling box for its tree,
 * drawn by drawMembers) or the overlay's choice of members. Built only when the view or the
 * members' names change: a re-parse replaces the members' trees, and drawMembers brings the
 * drawn ones up to date in place (rebuilding nine 300-word trees took most of a second).
 */
export function renderMembers(S, container, onToggle) {
  const key = JSON.stringify([S.view, S.members.map((m) => m.name)]);
  if (S.view !== "overlay" && container.$key === key) return;
  container.$key = key;
  for (const figure of container.querySelectorAll("figure[data-member]")) figureWatcher?.unobserve(figure);
  container.replaceChildren();
  if (!S.members.length) {
    container.append(h("p", { class: "meta" }, "No parser trees yet: pre-annotate the treebank from its queue page."));
    return;
  }
  if (S.view === "overlay") {
    container.append(h("p", { class: "meta" }, "Overlay on the tree above (dashed: arcs that differ from the current tree):"),
      h("div", { class: "overlay-choice" }, S.members.map((m, i) => h("label", { class: `member-${i % 6}` },
        h("input", { type: "checkbox", checked: S.overlay.has(m.name), onchange: () => onToggle(m.name) }), ` ${m.name}`))));
    return;
  }
  S.members.forEach((member, m) => {
    const box = h("div", { class: "tree-scroll small", role: "img", "aria-label": `${member.name} tree` });
    container.append(h("figure", { class: "multiple", "data-member": m },
      h("figcaption", {}, h("strong", {}, member.name), h("span", { class: "differ-count" }, "")), box));
  });
}

/**
 * Draw (or bring up to date) each member's tree in its figure: the words of S.memberVisible, or
 * all. A figure off screen is only marked stale and drawn when it scrolls into view (then
 * ``onLate(figure)`` runs): with the members below the tree, redrawing nine windows on each key
 * doubled its cost for trees nobody could see.
 */
export function drawMembers(S, container, onLate = () => {}) {
  for (const figure of container.querySelectorAll("figure[data-member]")) {
    const draw = () => drawMember(S, figure);
    watchFigure(figure, () => { draw(); onLate(figure); });
    if (figure.$offscreen) { figure.$stale = true; continue; }
    draw();
  }
}

function drawMember(S, figure) {
  const member = S.members[Number(figure.dataset.member)];
  if (!member) return;
  figure.$stale = false;
  drawTree(figure.querySelector(".tree-scroll"), wordsOf(S, member.heads, member.deprels, member.scores), S.direction, {
    compact: true, visible: S.memberVisible ?? null,
    arcClass: (w) => (differsFrom(S, member, w.id - 1) ? "differs" : "same"),
  });
  if (S.memberVisible) centreOn(figure.querySelector(".tree-scroll"), S.selected, S.memberRoom);
  const count = differCount(S, member);
  const caption = figure.querySelector(".differ-count");
  if (caption.textContent !== count) caption.textContent = count;
}

let figureWatcher = null;
const MARGIN = "300px 0px";  // figures this close to the viewport count as on screen (drawn before they show)

/** Keep ``figure.$offscreen`` up to date; ``redraw`` runs when a stale figure comes into view. */
function watchFigure(figure, redraw) {
  const watched = Boolean(figure.$redraw);
  figure.$redraw = redraw;
  if (watched || typeof IntersectionObserver === "undefined") return;
  figureWatcher ??= new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const target = entry.target;
      target.$offscreen = !entry.isIntersecting;
      if (entry.isIntersecting && target.$stale) target.$redraw();
    }
  }, { rootMargin: MARGIN });
  figureWatcher.observe(figure);
}

function differCount(S, member) {
  const differs = member.heads.filter((_, i) => differsFrom(S, member, i)).length;
  return ` · ${differs} arc${differs === 1 ? "" : "s"} differ`;
}

/** After a change of the ``changed`` words: recolour the members' arcs (their trees stay drawn). */
export function updateMembers(S, container, changed) {
  for (const figure of container.querySelectorAll("figure[data-member]")) {
    const member = S.members[Number(figure.dataset.member)];
    const arcs = figure.querySelector(".tree-scroll").$tree?.arcs;
    for (const word of changed) {
      const arc = arcs?.get(word)?.group;
      if (!arc) continue;
      const differs = differsFrom(S, member, word - 1);
      arc.classList.toggle("differs", differs);
      arc.classList.toggle("same", !differs);
    }
    figure.querySelector(".differ-count").textContent = differCount(S, member);
  }
}

/**
 * The word table: built when the members' names or the words change; otherwise every row is
 * brought up to date in place (after a re-parse: rebuilding 300 rows cost a tenth of a second).
 */
export function renderTable(S, table, onSelect) {
  const key = JSON.stringify([S.members.map((m) => m.name), Boolean(S.ensemble), S.words.length]);
  if (table.$key === key) { refreshRows(S, table); return; }
  table.$key = key;
  const head = h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Form"), h("th", { scope: "col" }, "UPOS"),
    S.members.map((m) => h("th", { scope: "col" }, m.name)), h("th", { scope: "col" }, "Ensemble"),
    h("th", { scope: "col", class: "num" }, "Vote share"), h("th", { scope: "col" }, "Current"), h("th", { scope: "col" }, "✓"));
  const rows = S.words.map((w, i) => {
    const cur = [S.heads[i], S.deprels[i]];
    const cell = (tree) => {
      const same = tree.heads[i] === cur[0] && tree.deprels[i] === cur[1];
      return h("td", { class: same ? "same" : "differs" }, `${tree.heads[i]} ${tree.deprels[i]}`);
    };
    const vote = S.ensemble?.scores ? S.ensemble.scores[i] : null;
    const flagged = S.flagged.has(w.id);
    return h("tr", {
      class: [membersAgree(S.members, w.id) ? "" : "disputed", flagged ? "flagged" : ""].join(" ").trim(),
      title: flagged ? detectorNote(S, w.id).slice(3) : null,
      "data-word": w.id, onclick: () => onSelect(w.id),
    }, h("td", {}, w.id), h("td", { dir: "auto" }, w.form), h("td", { class: "upos" }, S.columns.upos[i]), S.members.map(cell),
    S.ensemble ? cell(S.ensemble) : h("td", {}, "—"), h("td", { class: "num" }, vote === null || vote === undefined ? "—" : vote.toFixed(2)),
    h("td", { class: "current" }, `${cur[0] ?? "—"} ${cur[1] ?? ""}`), reviewedCell(S.reviewed.has(w.id)));
  });
  table.replaceChildren(h("thead", {}, head), h("tbody", {}, rows));
}

/**
 * The ✓ column: every cell holds the tick and only a class shows it, so accepting a word restyles
 * one cell instead of re-measuring the 100-row table (a text change would); hidden ticks are not read out.
 */
function reviewedCell(ticked) {
  return h("td", { class: ticked ? "reviewed ticked" : "reviewed" }, h("span", {}, "✓"));
}

/** Every row's member, ensemble and vote-share cells, its dispute mark, and updateTable's cells. */
function refreshRows(S, table) {
  const trees = S.ensemble ? [...S.members, S.ensemble] : S.members;
  const rows = table.tBodies[0]?.rows ?? [];
  S.words.forEach((w, i) => {
    const row = rows[i];
    if (!row) return;
    trees.forEach((tree, t) => {
      const cell = row.cells[3 + t];
      const text = `${tree.heads[i]} ${tree.deprels[i]}`;
      if (cell.textContent !== text) cell.textContent = text;
    });
    const vote = S.ensemble?.scores ? S.ensemble.scores[i] : null;
    const share = row.cells[3 + trees.length + (S.ensemble ? 0 : 1)];
    const text = vote === null || vote === undefined ? "—" : vote.toFixed(2);
    if (share && share.textContent !== text) share.textContent = text;
    const disputed = !membersAgree(S.members, w.id);
    if (row.classList.contains("disputed") !== disputed) row.classList.toggle("disputed", disputed);
  });
  updateTable(S, table, S.words.map((w) => w.id));
}

/** After a change of the ``changed`` words: their rows' colours, "Current" and ✓ cells. */
export function updateTable(S, table, changed) {
  const trees = S.ensemble ? [...S.members, S.ensemble] : S.members;
  const rows = table.tBodies[0]?.rows ?? [];
  for (const word of changed) {
    const row = rows[word - 1];
    if (!row) continue;
    const i = word - 1;
    trees.forEach((tree, t) => {
      const differs = differsFrom(S, tree, i);
      const cell = row.cells[3 + t];
      if (cell.classList.contains("differs") !== differs) cell.className = differs ? "differs" : "same";
    });
    const current = `${S.heads[i] ?? "—"} ${S.deprels[i] ?? ""}`;
    const cell = row.querySelector("td.current");
    if (cell.textContent !== current) cell.textContent = current;
    const upos = row.querySelector("td.upos");
    if (upos.textContent !== S.columns.upos[i]) upos.textContent = S.columns.upos[i];
    const reviewed = row.querySelector("td.reviewed");
    const ticked = S.reviewed.has(i + 1);
    if (reviewed.classList.contains("ticked") !== ticked) reviewed.classList.toggle("ticked", ticked);
  }
}

/**
 * The selected word's panel: heading, current arc, the members' proposed heads (1–9) and the
 * head/label form. Built once and then updated in place, so moving along a 100-word sentence
 * rebuilds only the proposals. The label suggestions (a datalist the members' labels lead) are
 * filled when the label field is focused: refilling them on every key cost more than the rest
 * of the key's work together.
 */
export function renderPanel(S, panel, actions) {
  const parts = panel.$parts ?? buildPanel(panel, actions);
  parts.state = S;
  const word = S.selected;
  const head = S.heads[word - 1];
  parts.number.textContent = `Word ${word}: `;
  parts.form.textContent = S.words[word - 1].form;
  parts.upos.textContent = ` ${S.columns.upos[word - 1]}`;
  parts.arc.textContent = `Head ${headName(S, head)} · label ${S.deprels[word - 1] ?? "—"}`;
  parts.reviewed.hidden = !S.reviewed.has(word);
  parts.reparse.textContent = reparseNote(S, word, (h) => headName(S, h));
  parts.reparse.hidden = !parts.reparse.textContent;
  const candidates = headCandidates(S.members, S.ensemble, word).slice(0, 9);
  const shown = JSON.stringify([word, head, candidates]);
  if (shown !== parts.shown) {
    parts.shown = shown;
    parts.candidates.replaceChildren(...candidates.map((c, i) => h("li", {},
      h("button", { type: "button", class: `button candidate${c.head === head ? " chosen" : ""}`,
        onclick: () => actions.setHead(word, c.head) }, h("kbd", {}, String(i + 1)), ` ${headName(S, c.head)} `,
      h("span", { class: "meta" }, `${c.votes} vote${c.votes === 1 ? "" : "s"}: ${c.names.join(", ")}`)))));
  }
  parts.head.max = S.words.length;
  setValue(parts.head, head ?? "");
  setValue(parts.label, S.deprels[word - 1] ?? "");
  if (document.activeElement === parts.label) fillLabels(S, parts);
}

function buildPanel(panel, actions) {
  const parts = {
    number: document.createTextNode(""), form: h("span", { dir: "auto" }), upos: h("span", { class: "meta" }),
    arc: document.createTextNode(""), reviewed: h("span", { class: "tag ok" }, "reviewed"),
    candidates: h("ol", { class: "candidates", "aria-label": "Heads proposed by the members (press 1–9)" }),
    reparse: h("p", { class: "reparse-note meta", id: "reparse-note", hidden: true }),
    head: h("input", { id: "head-input", type: "number", min: 0, size: 4 }),
    label: h("input", { id: "label-input", list: "label-list", autocomplete: "off", size: 14 }),
    labels: h("datalist", { id: "label-list" }), state: null, shown: null, labelsKey: null,
  };
  parts.label.addEventListener("focus", () => fillLabels(parts.state, parts));
  panel.replaceChildren(
    h("h2", {}, parts.number, parts.form, parts.upos),
    h("p", { class: "current-arc" }, parts.arc, parts.reviewed),
    parts.candidates, parts.reparse,
    h("form", { class: "arc-form", onsubmit: (e) => { e.preventDefault(); actions.submitForm(); } },
      h("label", {}, "Head # ", parts.head), h("label", {}, "Label ", parts.label), parts.labels,
      h("button", { type: "submit", class: "button" }, "Apply")),
  );
  panel.$parts = parts;
  return parts;
}

/** A field shows ``value`` (as the old panel did when it was rebuilt); untouched when it already does. */
function setValue(input, value) {
  if (input.value !== String(value)) input.value = String(value);
}

/** The label suggestions for the selected word and its head (the options are replaced only when they differ). */
function fillLabels(S, parts) {
  const labels = labelCandidates(S.members, S.selected, S.heads[S.selected - 1], S.labels);
  const key = labels.join("\n");
  if (key === parts.labelsKey) return;
  parts.labelsKey = key;
  parts.labels.replaceChildren(...labels.map((l) => h("option", { value: l })));
}

/** One problem of the tree; an unknown label gets an "Add" button when the user may add labels (``addLabel``). */
function errorItem(S, e, addLabel) {
  const label = e.code === "label" ? S.deprels[e.word - 1] : null;
  return h("li", {}, e.message, label && addLabel
    ? [" ", h("button", { type: "button", class: "link-button add-label", onclick: () => addLabel(label) }, `Add '${label}' to the labels`)]
    : null);
}

export function renderStatus(S, box, addLabel = null) {
  const crossing = nonProjective(S.heads);
  box.replaceChildren(...[
    S.errors.length ? h("div", { class: "alert", role: "alert", id: "errors" }, h("strong", {}, "Cannot save yet:"),
      h("ul", {}, S.errors.map((e) => errorItem(S, e, addLabel)))) : null,
    h("p", { class: "meta" }, `Version ${S.version}${S.dirty ? " · unsaved changes" : " · saved"} · `,
      crossing.length ? `non-projective arcs: ${crossing.join(", ")}` : "projective",
      ` · ${S.reviewed.size} of ${S.words.length} words reviewed · sentence: ${S.status.replace("_", " ")}`),
    S.message ? h("p", { class: `flash flash-${S.message.kind}`, role: "status", id: "message" }, S.message.text) : null,
  ].filter(Boolean));
}

export function renderConflict(box, conflict, S, actions) {
  if (!conflict) { box.replaceChildren(); box.hidden = true; return; }
  box.hidden = false;
  const theirs = conflict.theirs;
  const rows = conflict.differing.map((word) => h("tr", {}, h("td", {}, word), h("td", { dir: "auto" }, S.words[word - 1].form),
    h("td", {}, `${theirs.heads[word - 1]} ${theirs.deprels[word - 1]}`),
    h("td", {}, `${conflict.yours.heads[word - 1]} ${conflict.yours.deprels[word - 1]}`)));
  const theirTree = h("div", { class: "tree-scroll small" });
  box.replaceChildren(
    h("h2", {}, "Someone saved this sentence first"),
    h("p", {}, `Version ${theirs.version} by ${theirs.user} (${new Date(theirs.created_at).toLocaleString()}). `,
      `Your tree was not saved. ${conflict.differing.length} arc(s) differ:`),
    h("table", { class: "data conflict-table" }, h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "Word"),
      h("th", {}, "Theirs"), h("th", {}, "Yours"))), h("tbody", {}, rows)),
    h("p", {}, h("strong", {}, "Their tree:")), theirTree,
    h("p", { class: "actions" }, h("button", { type: "button", class: "button", onclick: actions.useTheirs }, "Use their version"),
      h("button", { type: "button", class: "button primary", onclick: actions.keepMine }, "Keep mine (save on top of theirs)")),
  );
  drawTree(theirTree, wordsOf(S, theirs.heads, theirs.deprels), S.direction, {
    compact: true, arcClass: (w) => (conflict.differing.includes(w.id) ? "differs" : "same"),
  });
}

export function renderHistory(list, entries, onRevert) {
  list.replaceChildren(...entries.map((e) => h("li", {},
    h("strong", {}, `${e.source} v${e.version}`), ` by ${e.author ?? e.user}, ${new Date(e.created_at).toLocaleString()}`,
    e.based_on ? h("span", { class: "meta" }, ` (from ${e.based_on})`) : null,
    e.human_words ? h("span", { class: "meta provenance" }, e.human_words.length === e.heads.length ? " · every arc human"
      : ` · partial: ${e.human_words.length} of ${e.heads.length} arcs human (${e.human_words.join(", ") || "none"}), the rest parser`) : null,
    e.changes?.length || e.column_changes?.length ? h("ul", {}, (e.changes ?? []).map((c) => h("li", {},
      `word ${c.word} ${c.form}: ${c.from[0]} ${c.from[1]} → ${c.to[0]} ${c.to[1]}`)),
    (e.column_changes ?? []).map((c) => h("li", { class: "column-change" },
      `word ${c.word} ${c.form}: ${c.column.toUpperCase()} ${c.from} → ${c.to}`))) : null,
    e.token_edit ? h("span", { class: "meta token-edit" }, ` · token edit: ${e.token_edit.what}`) : null,
    e.superseded ? h("span", { class: "meta superseded" }, " · for the earlier tokens (undo the token edit to go back)")
      : h("button", { type: "button", class: "link-button", onclick: () => onRevert(e) }, "Revert to this"))));
}

export function renderNotes(list, notes) {
  list.replaceChildren(...notes.map((n) => h("li", {}, h("strong", {}, n.user), ` (${new Date(n.created_at).toLocaleString()}): `,
    h("span", { class: "note-body" }, n.body))));
}
