/**
 * The selected word's UPOS, XPOS, LEMMA and FEATS fields (form #word-fields in
 * templates/workspace/editor.html) and the UD validator's warnings (#ud-warnings).
 *
 * S.columns is {upos, xpos, lemma, feats}: one string per word, as the server sent them
 * (data.current.columns, the columns of a saved tree) and as the annotator edited them. A
 * value the parsers predicted for a word imported without tags (data.words[i].predicted names
 * those columns) is drawn dashed until the annotator changes it. A
 * field applies when it changes (Tab or Enter, one undo step each); Esc puts the value back.
 * The values offered (datalists) come from GET /api/sentences/<id>/values: the treebank's
 * UPOS, XPOS and Feature=Value pairs, most frequent first, and the lemmas seen with the form.
 * The server validates every value (a bad one is a 422 naming the word and the field).
 */

import { api } from "./api.js";
import { h } from "./editor-view.js";
import { COLUMNS, mergeFeature } from "./tree-model.js";

function fillList(list, values) {
  list.replaceChildren(...values.map((value) => h("option", { value })));
}

/** Put the selected word's values in the fields (and its form's known lemmas in their list). */
export function renderWordFields(S, form) {
  const i = S.selected - 1;
  const set = (node, key, value) => { if (node[key] !== value) node[key] = value; };  // untouched = no relayout
  set(form.querySelector("#word-fields-word"), "textContent", `${S.selected} ${S.words[i].form}`);
  const word = S.words[i];
  let guessed = false;
  for (const column of COLUMNS) {
    const input = form.querySelector(`#${column}-input`);
    set(input, "value", S.columns[column][i]);
    // the parsers' value for a word imported without tags (data.words[].predicted), not yet changed
    const predicted = (word.predicted ?? []).includes(column) && S.columns[column][i] === word[column];
    input.classList.toggle("predicted", predicted);
    set(input, "title", predicted ? "predicted by the parsers: the word was imported without tags" : "");
    guessed ||= predicted;
  }
  set(form.querySelector("#predicted-note"), "hidden", !guessed);
  const lemmas = S.known?.lemmas?.[S.words[i].form] ?? [];
  const list = form.querySelector("#lemma-list");
  if (list.dataset.form !== S.words[i].form) { list.dataset.form = S.words[i].form; fillList(list, lemmas); }
}

/** The validator's messages on the saved tree; a message on a word selects it when clicked. */
export function renderWarnings(S, box, onSelect) {
  box.hidden = !S.warnings.length;
  if (!S.warnings.length) { box.replaceChildren(); return; }
  const label = (w) => (w.word ? `word ${w.word} ${S.words[w.word - 1]?.form ?? ""}` : "sentence");
  box.replaceChildren(
    h("p", {}, h("strong", {}, `UD validator: ${S.warnings.length} warning${S.warnings.length === 1 ? "" : "s"}`),
      " on the saved tree (saving is not blocked)"),
    h("ul", {}, S.warnings.map((w) => h("li", { "data-word": w.word, "data-test": w.test },
      w.word ? h("button", { type: "button", class: "link-button", onclick: () => onSelect(w.word) }, label(w)) : label(w),
      `: ${w.message} `, h("span", { class: "meta" }, `(L${w.level} ${w.test})`)))),
  );
}

/** Wire the fields to the editor: change → editor.setColumn; the FEATS adder; Esc; known values. */
export function bindWordFields(editor, form, valuesUrl) {
  const S = editor.S;
  for (const column of COLUMNS) {
    const input = form.querySelector(`#${column}-input`);
    input.addEventListener("change", () => editor.setColumn(S.selected, column, input.value.trim()));
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape") input.value = S.columns[column][S.selected - 1];
    });
  }
  const adder = form.querySelector("#feat-add");
  adder.addEventListener("change", () => {
    const pair = adder.value.trim();
    if (!/^[^=|\s]+=[^=|\s]+$/.test(pair)) return;
    editor.setColumn(S.selected, "feats", mergeFeature(S.columns.feats[S.selected - 1], pair));
    adder.value = "";
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    for (const column of COLUMNS) editor.setColumn(S.selected, column, form.querySelector(`#${column}-input`).value.trim());
    editor.$("#tree").focus();
  });
  api(valuesUrl).then(({ ok, body }) => {
    if (!ok) return;
    S.known = body;
    fillList(form.querySelector("#upos-list"), body.upos);
    fillList(form.querySelector("#xpos-list"), body.xpos);
    fillList(form.querySelector("#feats-list"), body.feats);
    editor.renderFields();
  });
}
