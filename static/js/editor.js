/**
 * The sentence editor: state and actions (rendering is in editor-view.js, keys in editor-keys.js).
 *
 * startEditor(root, data, urls): data is the JSON of GET /api/sentences/<id> (handed over with
 * |tojson); urls: {save, history, revert, notes, next, editor, values, reparse} (editor: sentence 0
 * with the queue arguments, filters and queue page, to keep for the next sentence; reparse: null
 * when the treebank has no trained models). Saving posts the tree and the word columns
 * (word-fields.js) with the version it started from; a 409 shows the conflict (theirs vs yours),
 * never overwrites; the UD validator's warnings come back with the save. Each head/label change
 * and accept re-parses around the human arcs when the toggle is on (reparse.js).
 */

import { api } from "./api.js";
import { bindKeys } from "./editor-keys.js";
import { focusActive, followAnchor, pannedAnchor, storedFocus, toggledFocus } from "./focus.js";
import { rememberNextOrder, storedNextOrder, wordsAfter } from "./next-order.js";
import { humanWords, rememberReparse, reparseEnabled, reparseStep, warmReparse } from "./reparse.js";
import {
  agreement, cloneColumns, columnWords, flaggedWords, History, membersAgree, sameTree, suggestLabel, validate,
} from "./tree-model.js";
import {
  drawMembers, markSelection, renderConflict, renderHistory, renderMembers, renderNotes, renderPanel, renderStatus,
  renderTable, renderTree, renderZoom, updateMembers, updateTable,
} from "./editor-view.js";
import { renderPendingBadge, updateWindow } from "./editor-window.js";
import { bindTokensMenu } from "./tokens-menu.js";
import { bindWordFields, renderWarnings, renderWordFields } from "./word-fields.js";
import { nextZoom, storedZoom } from "./zoom.js";


class Editor {
  constructor(root, data, urls) {
    this.root = root;
    this.urls = urls;
    this.history = new History();
    this.S = {
      words: data.words, members: data.members, ensemble: data.ensemble, labels: data.labels,
      direction: data.sentence.direction, heads: [...data.current.heads], deprels: [...data.current.deprels],
      basedOn: data.current.id, version: data.version, status: data.state.status,
      reviewed: new Set(data.state.reviewed_words), selected: wordFromUrl(data.words.length), pending: null, dirty: false,
      view: localStorage.getItem("arcvote.view") ?? "multiples", overlay: new Set(data.members.map((m) => m.name)),
      errors: [], errorWords: new Set(), message: null, conflict: null, zoom: storedZoom(), scale: 1,
      human: humanWords(data), reparse: null, reparsed: new Set(), reparseOn: Boolean(urls.reparse) && reparseEnabled(),
      nextOrder: storedNextOrder(),
      columns: cloneColumns(data.current.columns), warnings: data.warnings ?? [], known: null,
      focus: storedFocus(), anchor: null, context: null, visible: null, memberVisible: null, rooms: null,
      pWrong: data.p_wrong ?? null, flagAt: data.flag_p_wrong ?? null, flagged: flaggedWords(data.p_wrong, data.flag_p_wrong),
    };
    this.step = 0;
    this.S.saved = this.snapshot();
  }

  $(selector) { return this.root.querySelector(selector); }
  say(text, kind = "info") { this.S.message = { text, kind }; }
  snapshot() {
    const S = this.S;
    return { heads: [...S.heads], deprels: [...S.deprels], reviewed: new Set(S.reviewed), human: new Set(S.human),
      reparse: S.reparse, columns: cloneColumns(S.columns) };
  }
  /** Undo/redo: the tree of the snapshot (with the re-parse it had); its old messages no longer apply. */
  restore(snap) {
    this.step += 1; // a re-parse still under way belongs to the step undone
    Object.assign(this.S, snap);
    this.S.message = null;
    this.S.reparsed = new Set();
    this.markSaved();
    this.revalidate();
    this.renderChange();  // the members' proposals never change: a re-parse is kept apart (S.reparse)
  }
  /** Unsaved changes = the tree (or the reviewed words) differs from the last saved one. */
  markSaved(saved = null) {
    if (saved) this.S.saved = saved;
    this.S.dirty = !sameTree(this.snapshot(), this.S.saved);
  }
  setErrors(errors) { this.S.errors = errors; this.S.errorWords = new Set(errors.map((e) => e.word)); }
  revalidate() { this.setErrors(this.S.dirty ? validate(this.S.heads, this.S.deprels, this.S.labels) : []); }

  change(mutate) {
    this.history.push(this.snapshot());
    this.step += 1;
    this.S.message = null;
    this.S.reparsed = new Set();
    mutate();
    this.markSaved();
    this.revalidate();
    this.renderChange();
  }

  /**
   * Attach ``word`` to ``head`` with ``label`` (default: keep it). A word attached to ROOT is
   * labelled root; the root word moved under another word gets the label the members vote for
   * (suggestLabel) instead of root, so the tree can be saved without relabelling it by hand.
   */
  attach(word, head, label = null) {
    const S = this.S;
    S.heads[word - 1] = head;
    S.human.add(word);
    if (head === 0) S.deprels[word - 1] = "root";
    else if (label && label !== "root") S.deprels[word - 1] = label;
    else if (S.deprels[word - 1] === "root" || !S.deprels[word - 1]) S.deprels[word - 1] = suggestLabel(S.members, word, head);
  }

  setHead(word, head, label = null) {
    if (head === word || head < 0 || head > this.S.words.length) {
      this.say(`word ${word} cannot attach to ${head}`, "error"); this.refresh(); return;
    }
    this.change(() => this.attach(word, head, label));
    this.reparse();
  }

  /** Set one word column (upos, xpos, lemma, feats) of ``word``: one undo step, nothing if unchanged. */
  setColumn(word, column, value) {
    if (this.S.columns[column][word - 1] === value) return;
    this.change(() => { this.S.columns[column][word - 1] = value; });
  }

  submitForm() {
    const head = Number.parseInt(this.$("#head-input").value, 10);
    const label = this.$("#label-input").value.trim();
    if (Number.isNaN(head)) { this.say("type the number of the head word (0 = ROOT)", "error"); this.refresh(); return; }
    this.setHead(this.S.selected, head, label || null);
    this.$("#tree").focus();
  }

  select(word) {
    this.moveSelection(word);
    this.renderSelection();
    this.revealSelection();
  }

  /** The selection (and the focused window's anchor) on ``word``, nothing drawn. */
  moveSelection(word) {
    const S = this.S;
    S.selected = Math.min(Math.max(word, 1), S.words.length);
    S.pending = null;
    S.anchor = followAnchor(S.anchor, S.context, S.selected, S.words.length);
  }

  /** Scroll the selected word into view: in the whole tree (a focused window fits its box) and the table. */
  revealSelection() {
    if (!this.focused()) this.scrollTo(this.S.selected);
    this.$(`#tokens tr[data-word="${this.S.selected}"]`)?.scrollIntoView({ block: "nearest" });
  }

  /** Click a word to pick it as the dependent, then click its head (the ROOT box is head 0). */
  clickToken(word) {
    const S = this.S;
    if (word === 0) { this.clickRoot(); return; }
    if (S.pending && S.pending !== word) {
      const dep = S.pending;
      S.pending = null;
      S.selected = dep;
      this.setHead(dep, word);
      this.scrollTo(dep);  // back to the word whose head was chosen (its arc points to the head)
      return;
    }
    if (S.pending === word) { S.pending = null; this.renderSelection(); return; }
    S.selected = word;
    S.pending = word;
    this.say(`Click the head of "${S.words[word - 1].form}" (or the ROOT box, or press 0; Esc to cancel).`);
    this.renderSelection();
  }

  clickRoot() {
    const S = this.S;
    if (!S.pending) { this.say("Click a word first, then ROOT to make it the root."); this.refresh(); return; }
    const dep = S.pending;
    S.pending = null;
    S.selected = dep;
    this.setHead(dep, 0);
  }

  /** Mark ``word`` as checked and move on to the next word: one drawing for both. */
  accept(word) {
    this.change(() => {
      this.S.reviewed.add(word);
      this.S.human.add(word);
      this.moveSelection(word < this.S.words.length ? word + 1 : word);
    });
    this.revealSelection();
    this.reparse();
  }

  /** Accept every arc all members agree on, except those the error detector flags (left to the annotator). */
  acceptAgreed() {
    const S = this.S;
    const unanimous = S.words.map((w) => w.id).filter((id) => S.members.length && membersAgree(S.members, id));
    const agreed = unanimous.filter((id) => !S.flagged.has(id));
    const left = unanimous.length - agreed.length;
    this.change(() => {
      for (const id of agreed) {
        S.heads[id - 1] = S.members[0].heads[id - 1]; S.deprels[id - 1] = S.members[0].deprels[id - 1]; S.reviewed.add(id);
        S.human.add(id);
      }
    });
    this.say(`Accepted ${agreed.length} arc(s) all members agree on.`
      + (left ? ` Left ${left} that the error detector flags (p_wrong ≥ ${S.flagAt}) for you to check.` : ""));
    this.refresh();
    this.reparse();
  }

  /** Re-parse around every human arc when the toggle is on (reparse.js: reparseStep). */
  reparse() { return reparseStep(this); }

  setReparse(on) {
    this.S.reparseOn = on;
    rememberReparse(on);
    if (!on && this.S.reparsed.size) { this.S.reparsed = new Set(); this.drawTree(); }
  }

  /** The toggle is shown only when the treebank has trained models. */
  showReparseToggle() {
    const toggle = this.$("#reparse-toggle");
    if (!toggle) return;
    toggle.closest("label").hidden = !this.urls.reparse;
    toggle.checked = this.S.reparseOn;
  }

  /** Select the next disputed word not yet reviewed, in the toolbar's order (next-order.js). */
  nextDisputed() {
    const S = this.S;
    for (const word of wordsAfter(S.nextOrder, S.heads, S.selected)) {
      const disputed = S.flagged.has(word) || !membersAgree(S.members, word)
        || agreement(S.members, word, S.heads[word - 1]) !== "agree";
      if (!S.reviewed.has(word) && disputed) { this.select(word); return; }
    }
    this.say("No disputed arc left to review.");
    this.refresh();
  }

  undo() { const snap = this.history.undo(this.snapshot()); if (snap) this.restore(snap); }
  redo() { const snap = this.history.redo(this.snapshot()); if (snap) this.restore(snap); }

  /** Save the tree; "reviewed" vouches for every word (all are marked reviewed, as the server does). */
  async save(status = null) {
    const S = this.S;
    this.step += 1; // a re-parse still under way would change the tree after it was saved: drop its reply
    this.setErrors(validate(S.heads, S.deprels, S.labels));
    if (S.errors.length) { this.say("Not saved: fix the problems listed above.", "error"); this.renderChange(); return; }
    const reviewed = status === "reviewed" ? S.words.map((w) => w.id) : [...S.reviewed];
    const body = { heads: S.heads, deprels: S.deprels, columns: S.columns, expected_version: S.version, based_on_id: S.basedOn,
      reviewed_words: reviewed, status: status ?? (S.reviewed.size === S.words.length ? "reviewed" : "in_progress"),
      human_words: [...S.human] };
    const { status: code, body: reply } = await api(this.urls.save, { method: "POST", body });
    if (code === 201 || code === 200) {  // 200: someone saved exactly this tree first
      Object.assign(S, { version: reply.tree.version, basedOn: reply.tree.id, status: reply.state.status,
        reviewed: new Set(reply.state.reviewed_words), columns: cloneColumns(reply.tree.columns), warnings: reply.warnings });
      this.markSaved({ heads: [...reply.tree.heads], deprels: [...reply.tree.deprels], reviewed: new Set(S.reviewed),
        columns: cloneColumns(S.columns) });
      const how = S.status === "reviewed" ? " as reviewed (every word)" : "";
      this.say(reply.unchanged ? `${reply.tree.user} already saved this tree as version ${S.version}; marked${how}.`
        : `Saved version ${S.version}${how}.`, "success");
    } else if (code === 409) {
      S.conflict = reply;
      this.say("Not saved: someone else saved this sentence first (see below).", "error");
    } else if (code === 422 && reply.errors) {
      this.setErrors(reply.errors); this.say("Not saved.", "error");
    } else { this.say(`Not saved: ${reply.error ?? code}`, "error"); }
    this.render();
  }

  /** A curator adds an unknown label to the treebank's labels (the settings page lists it). */
  async addLabel(label) {
    const { status: code, body: reply } = await api(this.urls.add_label, { method: "POST", body: { label } });
    if (code === 200) {
      this.S.labels = reply.labels;
      this.say(`'${label}' is now one of the treebank's labels.`, "success");
      this.revalidate();
    } else { this.say(`Not added: ${reply.error ?? code}`, "error"); }
    this.render();
  }

  useTheirs() {
    const theirs = this.S.conflict.theirs;
    this.change(() => {
      this.S.heads = [...theirs.heads]; this.S.deprels = [...theirs.deprels]; this.S.columns = cloneColumns(theirs.columns);
    });
    Object.assign(this.S, { version: theirs.version, basedOn: theirs.id, conflict: null });
    this.markSaved({ heads: [...theirs.heads], deprels: [...theirs.deprels], reviewed: new Set(this.S.reviewed),
      columns: cloneColumns(theirs.columns) });
    this.say(`Loaded version ${theirs.version} by ${theirs.user}.`);
    this.revalidate();
    this.render();
  }

  /** Save on top of theirs: the next version is based on theirs (the one it overwrites). */
  keepMine() {
    const theirs = this.S.conflict.theirs;
    Object.assign(this.S, { version: theirs.version, basedOn: theirs.id, conflict: null });
    this.say("Your tree is kept; press s to save it on top of theirs.");
    this.render();
  }

  async nextSentence() {
    if (this.S.dirty && !window.confirm("Leave without saving?")) return;
    const { body } = await api(this.urls.next);
    if (body.id) window.location.assign(this.editorUrl(body.id));
    else { this.say("This was the last sentence of the queue."); this.refresh(); }
  }

  /** The editor of sentence ``id`` with this page's queue arguments (filters and queue page). */
  editorUrl(id) {
    const url = new URL(this.urls.editor, window.location.href);
    url.pathname = url.pathname.replace(/\/0$/, `/${id}`);
    return url.href;
  }

  async loadHistory() {
    const { body } = await api(this.urls.history);
    renderHistory(this.$("#history-list"), body.history, (entry) => this.revert(entry));
  }

  async revert(entry) {
    const S = this.S;
    const { status, body } = await api(this.urls.revert, { method: "POST", body: { version_id: entry.id, expected_version: S.version } });
    if (status !== 201) { this.say(body.error ?? "Revert failed", "error"); this.refresh(); return; }
    Object.assign(S, { heads: [...body.tree.heads], deprels: [...body.tree.deprels], version: body.tree.version,
      basedOn: body.tree.id, columns: cloneColumns(body.tree.columns), status: body.state.status,
      reviewed: new Set(body.state.reviewed_words), human: humanWords({ state: body.state, current: body.tree }),
      reparse: null, reparsed: new Set() });  // the review ticks follow the tree reverted to
    this.markSaved(this.snapshot());
    this.say(`Reverted to ${entry.source} v${entry.version} (saved as version ${S.version}).`, "success");
    this.revalidate();
    this.render();
    this.loadHistory();
  }

  async addNote(text) {
    const { status, body } = await api(this.urls.notes, { method: "POST", body: { body: text } });
    if (status === 201) { this.$("#note-body").value = ""; renderNotes(this.$("#notes-list"), body.notes); return; }
    this.say(body.error, "error");
    this.refresh();
  }

  setView(view) { this.S.view = view; this.S.rooms = null; localStorage.setItem("arcvote.view", view); this.render(); }
  toggleOverlay(name) { const o = this.S.overlay; if (o.has(name)) o.delete(name); else o.add(name); this.render(); }

  /** Zoom the tree in (+1) or out (-1) a step, or to the box's width ("fit"). */
  zoom(step) {
    const S = this.S;
    S.zoom = nextZoom(S.zoom, S.scale, step);
    this.drawTree();
    renderZoom(S, this.root);
    this.scrollToSelected();
  }

  /** Whether the focused window is on (focus.js): the tree shows a window of the sentence. */
  focused() { return focusActive(this.S.focus, this.S.words.length); }

  /** Draw the tree (with the focused window on, the window around the selection, and the members' windows). */
  drawTree() {
    const S = this.S;
    const members = this.$("#members");
    members.classList.toggle("focused", this.focused());  // wider boxes: a window of a few words each
    updateWindow(S, this.$("#tree"), members.querySelector(".tree-scroll"));
    S.scale = renderTree(S, this.$("#tree"), (word) => this.clickToken(word), () => this.clickToken(0),
      (from, to) => this.pan(Math.round((from + to) / 2)));
    if (S.memberVisible) drawMembers(S, members, () => markSelection(S, this.root));
    markSelection(S, this.root);
  }

  /** Move the focused window: to word ``to``, or half a window right (+1) / left (-1); the selection stays. */
  pan(to, direction = 0) {
    const S = this.S;
    if (!this.focused()) return;
    S.anchor = direction ? pannedAnchor(S.anchor ?? S.selected, S.context, direction, S.words.length) : to;
    this.drawTree();
  }

  /** The focused window on or off (the choice is kept per browser). */
  toggleFocus() {
    const S = this.S;
    S.focus = toggledFocus(this.focused());
    S.anchor = S.selected;
    S.rooms = null;
    this.$("#tree").$tree = null;
    this.render();
    this.scrollToSelected();
  }

  scrollToSelected() { this.scrollTo(this.S.selected); }

  /** Scroll the tree box to word ``word`` (when drawn). */
  scrollTo(word) {
    this.$(`#tree .token[data-id="${word}"]`)?.scrollIntoView({ block: "nearest", inline: "center" });
  }

  /** The panel and the status line (messages) only. */
  refresh() {
    renderPanel(this.S, this.$("#panel"), { setHead: (w, h) => this.setHead(w, h), submitForm: () => this.submitForm() });
    renderStatus(this.S, this.$("#status"), this.urls.add_label ? (label) => this.addLabel(label) : null);
    this.fieldsFrame ??= requestAnimationFrame(() => this.renderFields());  // once a frame, after the key's work
    this.tokensMenu?.render();
  }

  /** The selected word's column fields, now (the t key needs them before it focuses one). */
  renderFields() {
    cancelAnimationFrame(this.fieldsFrame);
    this.fieldsFrame = null;
    renderWordFields(this.S, this.$("#word-fields"));
  }

  /** Another word selected (or picked): move the highlight; only the focused window (or its overlay) is redrawn. */
  renderSelection() {
    if (this.focused()) this.drawTree(); else markSelection(this.S, this.root);
    this.pendingBadge();
    this.refresh();
  }

  /** The badge naming the word whose head is being chosen when it has scrolled out of the tree box. */
  pendingBadge() {
    const badge = this.$("#pending-badge");
    if (badge && (this.S.pending || !badge.hidden)) renderPendingBadge(this.S, this.$("#tree"), badge);
  }

  /** The tree changed: redraw it (the members' trees and the table only change their colours). */
  renderChange() {
    const S = this.S;
    const last = this.drawn ?? { heads: [], deprels: [], reviewed: new Set() };
    const retagged = new Set(columnWords(S.columns, last.columns));
    const changed = S.words.map((w) => w.id).filter((id) => S.heads[id - 1] !== last.heads[id - 1]
      || S.deprels[id - 1] !== last.deprels[id - 1] || S.reviewed.has(id) !== last.reviewed.has(id) || retagged.has(id));
    this.drawn = this.snapshot();
    this.drawTree();
    this.pendingBadge();
    if (!S.memberVisible) updateMembers(S, this.$("#members"), changed);
    updateTable(S, this.$("#tokens"), changed);
    this.refresh();
  }

  /** Everything (first draw, another members view, a conflict, a revert). */
  render() {
    const S = this.S;
    renderMembers(S, this.$("#members"), (name) => this.toggleOverlay(name));
    renderTable(S, this.$("#tokens"), (word) => this.select(word));
    this.drawn = this.snapshot();
    this.drawTree();
    if (!S.memberVisible) drawMembers(S, this.$("#members"), () => markSelection(S, this.root));
    renderZoom(S, this.root);
    this.$("#focus-toggle")?.setAttribute("aria-pressed", String(this.focused()));
    for (const id of ["#pan-left", "#pan-right"]) { const button = this.$(id); if (button) button.hidden = !this.focused(); }
    this.refresh();
    renderConflict(this.$("#conflict"), S.conflict, S, { useTheirs: () => this.useTheirs(), keepMine: () => this.keepMine() });
    renderWarnings(S, this.$("#ud-warnings"), (word) => this.select(word));
    for (const input of this.root.querySelectorAll('input[name="view"]')) input.checked = input.value === S.view;
  }

  bindButtons() {
    const on = (selector, handler) => this.$(selector).addEventListener("click", handler);
    on("#save", () => this.save());
    on("#undo", () => this.undo());
    on("#redo", () => this.redo());
    on("#accept-agreed", () => this.acceptAgreed());
    on("#mark-reviewed", () => this.save("reviewed"));
    on("#next-sentence", () => this.nextSentence());
    on("#zoom-in", () => this.zoom(1));
    on("#zoom-out", () => this.zoom(-1));
    on("#zoom-fit", () => this.zoom("fit"));
    on("#focus-toggle", () => this.toggleFocus());
    on("#pan-left", () => this.pan(null, -1));
    this.$("#pending-badge")?.addEventListener("click", () => { this.scrollTo(this.S.pending); this.$("#tree").focus(); });
    this.$("#tree").addEventListener("scroll", () => this.pendingBadge(), { passive: true });
    on("#pan-right", () => this.pan(null, 1));
    this.$("#reparse-toggle")?.addEventListener("change", (e) => this.setReparse(e.target.checked));
    const order = this.$("#next-order");
    order.value = this.S.nextOrder;
    order.addEventListener("change", () => { this.S.nextOrder = order.value; rememberNextOrder(order.value); });
    for (const input of this.root.querySelectorAll('input[name="view"]')) input.addEventListener("change", () => this.setView(input.value));
    this.$("#history").addEventListener("toggle", (e) => { if (e.target.open) this.loadHistory(); });
    this.$("#note-form").addEventListener("submit", (e) => { e.preventDefault(); this.addNote(this.$("#note-body").value); });
    window.addEventListener("beforeunload", (e) => { if (this.S.dirty) e.preventDefault(); });
    window.addEventListener("resize", () => {
      this.S.rooms = null;
      if (this.S.zoom !== "fit" && !this.focused()) return;
      this.$("#tree").$tree = null;
      this.drawTree();
      renderZoom(this.S, this.root);
    });
  }
}

/** The word ``?word=N`` asks to select first (a link from the suspicious-arcs page), else 1. */
function wordFromUrl(count) {
  const word = Number(new URLSearchParams(window.location.search).get("word"));
  return Number.isInteger(word) && word >= 1 && word <= count ? word : 1;
}

export function startEditor(root, data, urls) {
  const editor = new Editor(root, data, urls);
  editor.bindButtons();
  editor.showReparseToggle();
  warmReparse(urls.reparse);
  bindKeys(editor);
  bindWordFields(editor, editor.$("#word-fields"), urls.values);
  const menu = editor.$("#tokens-menu");
  if (menu && data.tokens) editor.tokensMenu = bindTokensMenu(editor, menu, data.tokens);
  renderNotes(editor.$("#notes-list"), data.notes);
  editor.render();
  editor.$("#tree").focus();
  return editor.S;
}
