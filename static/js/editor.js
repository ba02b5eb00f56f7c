/**
 * The sentence editor: state and actions (rendering is in editor-view.js, keys in editor-keys.js).
 *
 * startEditor(root, data, urls): data is the JSON of GET /api/sentences/<id> (handed over with
 * |tojson); urls: {save, history, revert, notes, next, editor} (editor: sentence 0 with the queue
 * arguments, filters and queue page, to keep for the next sentence). Saving posts the tree with the
 * version it started from; a 409 shows the conflict (theirs vs yours), never overwrites.
 */

import { api } from "./api.js";
import { bindKeys } from "./editor-keys.js";
import { agreement, History, membersAgree, validate } from "./tree-model.js";
import {
  renderConflict, renderHistory, renderMembers, renderNotes, renderPanel, renderStatus, renderTable, renderTree,
} from "./editor-view.js";

class Editor {
  constructor(root, data, urls) {
    this.root = root;
    this.urls = urls;
    this.history = new History();
    this.S = {
      words: data.words, members: data.members, ensemble: data.ensemble, labels: data.labels,
      direction: data.sentence.direction, heads: [...data.current.heads], deprels: [...data.current.deprels],
      basedOn: data.current.id, version: data.version, status: data.state.status,
      reviewed: new Set(data.state.reviewed_words), selected: 1, pending: null, dirty: false,
      view: localStorage.getItem("arcvote.view") ?? "multiples", overlay: new Set(data.members.map((m) => m.name)),
      errors: [], errorWords: new Set(), message: null, conflict: null,
    };
  }

  $(selector) { return this.root.querySelector(selector); }
  say(text, kind = "info") { this.S.message = { text, kind }; }
  snapshot() { const S = this.S; return { heads: [...S.heads], deprels: [...S.deprels], reviewed: new Set(S.reviewed) }; }
  restore(snap) { Object.assign(this.S, snap); this.S.dirty = true; this.revalidate(); this.render(); }
  setErrors(errors) { this.S.errors = errors; this.S.errorWords = new Set(errors.map((e) => e.word)); }
  revalidate() { this.setErrors(this.S.dirty ? validate(this.S.heads, this.S.deprels, this.S.labels) : []); }

  change(mutate) {
    this.history.push(this.snapshot());
    mutate();
    this.S.dirty = true;
    this.S.message = null;
    this.revalidate();
    this.render();
  }

  setHead(word, head) {
    if (head === word || head < 0 || head > this.S.words.length) {
      this.say(`word ${word} cannot attach to ${head}`, "error"); this.render(); return;
    }
    this.change(() => { this.S.heads[word - 1] = head; if (head === 0) this.S.deprels[word - 1] = "root"; });
  }

  submitForm() {
    const head = Number.parseInt(this.$("#head-input").value, 10);
    const label = this.$("#label-input").value.trim();
    if (Number.isNaN(head)) { this.say("type the number of the head word (0 = ROOT)", "error"); this.render(); return; }
    const word = this.S.selected;
    this.change(() => { this.S.heads[word - 1] = head; if (label) this.S.deprels[word - 1] = label; });
    this.$("#tree").focus();
  }

  select(word) {
    this.S.selected = Math.min(Math.max(word, 1), this.S.words.length);
    this.S.pending = null;
    this.render();
    this.$(`#tree .token[data-id="${this.S.selected}"]`)?.scrollIntoView({ block: "nearest", inline: "center" });
    this.$(`#tokens tr[data-word="${this.S.selected}"]`)?.scrollIntoView({ block: "nearest" });
  }

  /** Click a word to pick it as the dependent, then click its head (the ROOT box is head 0). */
  clickToken(word) {
    const S = this.S;
    if (word === 0) { this.clickRoot(); return; }
    if (S.pending && S.pending !== word) { const dep = S.pending; S.pending = null; S.selected = dep; this.setHead(dep, word); return; }
    if (S.pending === word) { S.pending = null; this.render(); return; }
    S.selected = word;
    S.pending = word;
    this.say(`Click the head of "${S.words[word - 1].form}" (or the ROOT box, or press 0; Esc to cancel).`);
    this.render();
  }

  clickRoot() {
    const S = this.S;
    if (!S.pending) { this.say("Click a word first, then ROOT to make it the root."); this.render(); return; }
    const dep = S.pending;
    S.pending = null;
    S.selected = dep;
    this.setHead(dep, 0);
  }

  accept(word) { this.change(() => this.S.reviewed.add(word)); this.select(word < this.S.words.length ? word + 1 : word); }

  acceptAgreed() {
    const S = this.S;
    const agreed = S.words.map((w) => w.id).filter((id) => S.members.length && membersAgree(S.members, id));
    this.change(() => {
      for (const id of agreed) {
        S.heads[id - 1] = S.members[0].heads[id - 1]; S.deprels[id - 1] = S.members[0].deprels[id - 1]; S.reviewed.add(id);
      }
    });
    this.say(`Accepted ${agreed.length} arc(s) all members agree on.`);
    this.render();
  }

  nextDisputed() {
    const S = this.S;
    const n = S.words.length;
    for (let step = 1; step <= n; step += 1) {
      const word = ((S.selected - 1 + step) % n) + 1;
      const disputed = !membersAgree(S.members, word) || agreement(S.members, word, S.heads[word - 1]) !== "agree";
      if (!S.reviewed.has(word) && disputed) { this.select(word); return; }
    }
    this.say("No disputed arc left to review.");
    this.render();
  }

  undo() { const snap = this.history.undo(this.snapshot()); if (snap) this.restore(snap); }
  redo() { const snap = this.history.redo(this.snapshot()); if (snap) this.restore(snap); }

  async save(status = null) {
    const S = this.S;
    this.setErrors(validate(S.heads, S.deprels, S.labels));
    if (S.errors.length) { this.say("Not saved: fix the problems listed above.", "error"); this.render(); return; }
    const body = { heads: S.heads, deprels: S.deprels, expected_version: S.version, based_on_id: S.basedOn,
      reviewed_words: [...S.reviewed], status: status ?? (S.reviewed.size === S.words.length ? "reviewed" : "in_progress") };
    const { status: code, body: reply } = await api(this.urls.save, { method: "POST", body });
    if (code === 201) {
      Object.assign(S, { version: reply.tree.version, basedOn: reply.tree.id, status: reply.state.status, dirty: false });
      this.say(`Saved version ${S.version}.`, "success");
    } else if (code === 409) {
      S.conflict = reply;
      this.say("Not saved: someone else saved this sentence first (see below).", "error");
    } else if (code === 422 && reply.errors) {
      this.setErrors(reply.errors); this.say("Not saved.", "error");
    } else { this.say(`Not saved: ${reply.error ?? code}`, "error"); }
    this.render();
  }

  useTheirs() {
    const theirs = this.S.conflict.theirs;
    this.change(() => { this.S.heads = [...theirs.heads]; this.S.deprels = [...theirs.deprels]; });
    Object.assign(this.S, { version: theirs.version, basedOn: theirs.id, dirty: false, conflict: null });
    this.say(`Loaded version ${theirs.version} by ${theirs.user}.`);
    this.revalidate();
    this.render();
  }

  keepMine() {
    this.S.version = this.S.conflict.theirs.version;
    this.S.conflict = null;
    this.say("Your tree is kept; press s to save it on top of theirs.");
    this.render();
  }

  async nextSentence() {
    if (this.S.dirty && !window.confirm("Leave without saving?")) return;
    const { body } = await api(this.urls.next);
    if (body.id) window.location.assign(this.editorUrl(body.id));
    else { this.say("This was the last sentence of the queue."); this.render(); }
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
    if (status !== 201) { this.say(body.error ?? "Revert failed", "error"); this.render(); return; }
    Object.assign(S, { heads: [...body.tree.heads], deprels: [...body.tree.deprels], version: body.tree.version,
      basedOn: body.tree.id, dirty: false });
    this.say(`Reverted to ${entry.source} v${entry.version} (saved as version ${S.version}).`, "success");
    this.revalidate();
    this.render();
    this.loadHistory();
  }

  async addNote(text) {
    const { status, body } = await api(this.urls.notes, { method: "POST", body: { body: text } });
    if (status === 201) { this.$("#note-body").value = ""; renderNotes(this.$("#notes-list"), body.notes); return; }
    this.say(body.error, "error");
    this.render();
  }

  setView(view) { this.S.view = view; localStorage.setItem("arcvote.view", view); this.render(); }
  toggleOverlay(name) { const o = this.S.overlay; if (o.has(name)) o.delete(name); else o.add(name); this.render(); }

  render() {
    const S = this.S;
    renderTree(S, this.$("#tree"), (word) => this.clickToken(word), () => this.clickToken(0));
    renderMembers(S, this.$("#members"), (name) => this.toggleOverlay(name));
    renderTable(S, this.$("#tokens"), (word) => this.select(word));
    renderPanel(S, this.$("#panel"), { setHead: (w, h) => this.setHead(w, h), submitForm: () => this.submitForm() });
    renderStatus(S, this.$("#status"));
    renderConflict(this.$("#conflict"), S.conflict, S, { useTheirs: () => this.useTheirs(), keepMine: () => this.keepMine() });
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
    for (const input of this.root.querySelectorAll('input[name="view"]')) input.addEventListener("change", () => this.setView(input.value));
    this.$("#history").addEventListener("toggle", (e) => { if (e.target.open) this.loadHistory(); });
    this.$("#note-form").addEventListener("submit", (e) => { e.preventDefault(); this.addNote(this.$("#note-body").value); });
    window.addEventListener("beforeunload", (e) => { if (this.S.dirty) e.preventDefault(); });
  }
}

export function startEditor(root, data, urls) {
  const editor = new Editor(root, data, urls);
  editor.bindButtons();
  bindKeys(editor);
  renderNotes(editor.$("#notes-list"), data.notes);
  editor.render();
  editor.$("#tree").focus();
  return editor.S;
}
