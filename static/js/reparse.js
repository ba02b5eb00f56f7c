/**
 * Re-parsing around the annotator's arcs (POST /api/sentences/<id>/reparse).
 *
 * S.human is the set of words whose arc the annotator has set or confirmed; they are sent as
 * constraints [{id, head, deprel}] with the tree shown now (``previous``). The reply's ensemble
 * tree replaces every other word's arc. The members' trees and vote shares shown (S.members,
 * S.ensemble: the arc colours, the panel's "N votes") stay what the members proposed in the
 * pre-annotation: the re-parse is a consequence of the annotator's arcs, not a vote. What it
 * changed is kept apart: S.reparse = {members, ensemble} (the re-parsed trees, shown as a
 * separate line of the panel, :func:`reparseNote`) and S.reparsed, the words whose arc it
 * moved (highlighted until the next step). The caller pushed one undo snapshot before the
 * human edit, so one undo takes back both.
 */

import { api } from "./api.js";
import { findCycle } from "./tree-model.js";

const STORAGE_KEY = "arcvote.reparse";

/** Whether re-parsing is on: remembered per browser, on unless turned off. */
export function reparseEnabled() { return localStorage.getItem(STORAGE_KEY) !== "off"; }
export function rememberReparse(on) { localStorage.setItem(STORAGE_KEY, on ? "on" : "off"); }

/** When the editor opens: the server parses the sentence once without constraints (and loads the
 * models), so the annotator's first edit costs only the constrained re-parse. The reply is not used. */
export function warmReparse(url) {
  if (url && reparseEnabled()) api(url, { method: "POST", body: { constraints: [] } });
}

/** Words whose arc a person set or confirmed when the editor opens: the reviewed words and the
 * human arcs of a saved partial tree (its provenance). */
export function humanWords(data) {
  const human = new Set(data.state.reviewed_words);
  (data.current.provenance ?? []).forEach((source, i) => { if (source === "human") human.add(i + 1); });
  return human;
}

/** The human arcs of the editor's state as the endpoint's constraints. */
export function constraintsOf(S) {
  return [...S.human].sort((a, b) => a - b).filter((w) => S.heads[w - 1] !== null && S.heads[w - 1] !== undefined)
    .map((w) => ({ id: w, head: S.heads[w - 1], deprel: S.deprels[w - 1] || null }));
}

/**
 * Why the human arcs cannot be re-parsed around ("" when they can): a cycle among them, or two
 * of them on ROOT. The server refuses both (422); the editor says so and sends nothing.
 */
export function constraintProblem(constraints, n) {
  const heads = new Array(n).fill(null);
  for (const c of constraints) heads[c.id - 1] = c.head;
  const cycle = findCycle(heads);
  if (cycle) return `your arcs form a cycle (${[...cycle, cycle[0]].join(" → ")})`;
  const roots = constraints.filter((c) => c.head === 0).map((c) => c.id);
  return roots.length > 1 ? `your arcs attach ${roots.length} words to ROOT (${roots.join(", ")})` : "";
}

/**
 * Apply a reply: free words take the ensemble's arcs; the re-parsed members and ensemble are
 * kept in S.reparse (the proposals shown stay the pre-annotation's); the consequential changes
 * are marked.
 */
export function applyReply(S, reply) {
  reply.ensemble.heads.forEach((head, i) => {
    if (S.human.has(i + 1)) return;
    S.heads[i] = head;
    S.deprels[i] = reply.ensemble.deprels[i];
  });
  S.reparse = { members: reply.members, ensemble: reply.ensemble };
  S.reparsed = new Set(reply.changed);
}

/**
 * The panel's line on what the re-parse did to ``word`` ("" when nothing): whether it moved
 * the word's arc, and the re-parsed members' heads where they differ from their proposals,
 * e.g. "Re-parse moved this arc · re-parsed: graph1, eager → 5 yapmaktadır; hybrid → 3 Opel".
 */
export function reparseNote(S, word, headName) {
  if (!S.reparse) return "";
  const i = word - 1;
  const changed = S.reparse.members.some((m) => {
    const proposed = S.members.find((p) => p.name === m.name);
    return !proposed || proposed.heads[i] !== m.heads[i];
  });
  if (!changed && !S.reparsed.has(word)) return "";
  const byHead = new Map();
  for (const m of S.reparse.members) byHead.set(m.heads[i], [...(byHead.get(m.heads[i]) ?? []), m.name]);
  const heads = [...byHead].map(([head, names]) => `${names.join(", ")} → ${headName(head)}`).join("; ");
  return `${S.reparsed.has(word) ? "Re-parse moved this arc · " : ""}re-parsed members: ${heads}`;
}

/**
 * Ask the server for the tree around the human arcs. ``isCurrent()`` tells whether the step
 * that asked is still the newest (an edit, undo or redo since then makes the reply stale).
 * Resolves to {status, body} or null when the reply is stale.
 */
async function requestReparse(url, S, isCurrent) {
  const whole = S.heads.every((h) => Number.isInteger(h)) && S.deprels.every((d) => typeof d === "string");
  const body = { constraints: constraintsOf(S), previous: whole ? { heads: [...S.heads], deprels: [...S.deprels] } : null };
  const reply = await api(url, { method: "POST", body });
  return isCurrent() ? reply : null;
}

/**
 * One re-parse step of ``editor`` (editor.js: its state S, urls, step counter and renderers),
 * after the human edit was applied as one undo step. The reply belongs to the step that asked:
 * a newer edit, undo or redo drops it. Human arcs in a cycle (or two on ROOT) are not sent: the
 * message says why. 409 (no trained models) hides the toggle; 422 only says why nothing was
 * re-parsed.
 */
export async function reparseStep(editor) {
  const S = editor.S;
  if (!S.reparseOn || !editor.urls.reparse) return;
  const problem = constraintProblem(constraintsOf(S), S.words.length);
  if (problem) {  // the server would refuse it (422): say why plainly instead of asking
    editor.say(`Not re-parsed: ${problem}. Change one of these arcs and the rest is re-parsed again.`, "info");
    editor.refresh();
    return;
  }
  const step = editor.step;
  const reply = await requestReparse(editor.urls.reparse, S, () => step === editor.step);
  if (!reply) return;
  if (reply.status === 200) {
    applyReply(S, reply.body);
    editor.markSaved();
    editor.revalidate();
    if (S.reparsed.size) editor.say(`Re-parsed: ${S.reparsed.size} other arc(s) changed (highlighted).`);
    keepingTheField(editor, () => editor.renderChange());  // the members' proposals shown stay as they were
    return;
  }
  if (reply.status === 409) { editor.urls.reparse = null; editor.showReparseToggle(); }
  editor.say(`Not re-parsed: ${reply.body.error ?? reply.status}`, reply.status === 422 ? "info" : "error");
  keepingTheField(editor, () => editor.refresh());
}

/**
 * Run ``redraw`` (a reply that arrived while the annotator may be typing, e.g. a label after
 * pressing l) without taking their field away: the redraw shows the tree's values (and may
 * rebuild a field), so the field they were in is found again by id and gets back their text,
 * caret and focus.
 */
function keepingTheField(editor, redraw) {
  const field = document.activeElement;
  const typing = field?.id && field.matches("input, textarea") && editor.root.contains(field)
    ? { id: field.id, value: field.value, start: field.selectionStart, end: field.selectionEnd } : null;
  redraw();
  const again = typing && editor.root.querySelector(`#${typing.id}`);
  if (!again) return;
  if (again.value !== typing.value) again.value = typing.value;
  if (again !== document.activeElement) again.focus();
  if (typing.start !== null) again.setSelectionRange(typing.start, typing.end);  // null: a number field
}
