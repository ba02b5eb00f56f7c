/**
 * Keyboard-only correction for the editor (the legend in templates/workspace/editor.html).
 *
 * j/k or →/← (mirrored for right-to-left scripts) move between words, n jumps to the next
 * disputed arc, 1–9 pick a proposed head, 0 attaches to ROOT, h/l focus the head/label
 * inputs, t the word's UPOS field (Tab on to XPOS, lemma, FEATS; word-fields.js), T the Tokens menu
 * (tokens-menu.js), a accepts a word, A accepts all agreed arcs (not those the error detector
 * flags), u/U (Ctrl+Z/Ctrl+Y) undo/redo,
 * s (Ctrl+S) saves, r saves as reviewed, ] opens the next sentence, m switches the members view,
 * +/- zoom the tree and f fits it to the box's width; w turns the focused window of a long
 * sentence on or off and , / . move it half a window left / right (the selection, and the word
 * whose head is being chosen, stay in it).
 */

import { headCandidates } from "./tree-model.js";

function focusInput(editor, selector) {
  const input = editor.$(selector);
  input.focus();
  input.select();
}

function pickCandidate(editor, number) {
  const choice = headCandidates(editor.S.members, editor.S.ensemble, editor.S.selected)[number - 1];
  if (choice) editor.setHead(editor.S.selected, choice.head);
}

function plainKeys(editor) {
  const rtl = editor.S.direction === "rtl";
  return {
    j: () => editor.select(editor.S.selected + 1),
    k: () => editor.select(editor.S.selected - 1),
    [rtl ? "ArrowLeft" : "ArrowRight"]: () => editor.select(editor.S.selected + 1),
    [rtl ? "ArrowRight" : "ArrowLeft"]: () => editor.select(editor.S.selected - 1),
    n: () => editor.nextDisputed(),
    a: () => editor.accept(editor.S.selected),
    A: () => editor.acceptAgreed(),
    u: () => editor.undo(),
    U: () => editor.redo(),
    s: () => editor.save(),
    r: () => editor.save("reviewed"),
    "]": () => editor.nextSentence(),
    0: () => { const word = editor.S.pending ?? editor.S.selected; editor.S.pending = null; editor.setHead(word, 0); },
    h: () => focusInput(editor, "#head-input"),
    l: () => focusInput(editor, "#label-input"),
    t: () => { editor.renderFields(); focusInput(editor, "#upos-input"); },
    T: () => editor.tokensMenu?.open(),
    m: () => editor.setView(editor.S.view === "overlay" ? "multiples" : "overlay"),
    "+": () => editor.zoom(1),
    "=": () => editor.zoom(1),
    "-": () => editor.zoom(-1),
    f: () => editor.zoom("fit"),
    w: () => editor.toggleFocus(),
    [rtl ? "." : ","]: () => editor.pan(null, -1),
    [rtl ? "," : "."]: () => editor.pan(null, 1),
    Escape: () => { editor.S.pending = null; editor.S.message = null; editor.renderSelection(); },
  };
}

function controlKeys(editor, shift) {
  return { s: () => editor.save(), z: () => (shift ? editor.redo() : editor.undo()), y: () => editor.redo() };
}

export function bindKeys(editor) {
  const plain = plainKeys(editor);
  document.addEventListener("keydown", (event) => {
    if (event.target.matches("input, textarea, select")) {
      if (event.key === "Escape") { event.target.blur(); editor.$("#tree").focus(); }
      return;
    }
    if (event.altKey) return;
    let action;
    if (event.ctrlKey || event.metaKey) action = controlKeys(editor, event.shiftKey)[event.key.toLowerCase()];
    else if (/^[1-9]$/.test(event.key)) action = () => pickCandidate(editor, Number(event.key));
    else action = plain[event.key];
    if (action) { event.preventDefault(); action(); }
  });
}
