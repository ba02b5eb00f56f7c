/**
 * The editor's Tokens menu (#tokens-menu in templates/workspace/editor.html; T opens it): split
 * the selected word, merge it with the next word, make words a multiword token (or undo one),
 * split the sentence after the selected word, merge it with the next sentence, and undo the last
 * such edit. Each posts {operation, ...} to POST /api/sentences/<id>/tokens; the server carries
 * every tree over to the new words as new versions, and the page reloads to draw them. A 422
 * names the field at fault. Refused while the tree has unsaved changes (they would be lost).
 *
 * data.tokens (from the server): {multiwords: [[first, last, form]], undo: {id, what} | null,
 * has_next, refusal: null | why the user may not edit the tokens}.
 */

import { api } from "./api.js";

export function bindTokensMenu(editor, menu, info) {
  const S = editor.S;
  const $ = (selector) => menu.querySelector(selector);
  const url = menu.dataset.url;
  const multiwordOf = (word) => info.multiwords.find(([first, last]) => first <= word && word <= last) ?? null;

  function say(text, kind = "error") { editor.say(text, kind); editor.refresh(); }

  async function send(body, done) {
    if (S.dirty) { say("Save or undo your changes to the tree first: a token edit reloads the sentence."); return; }
    const { status, body: reply } = await api(url, { method: "POST", body });
    if (status === 201) {
      sessionStorage.setItem("arcvote.tokens", `${done}.`);
      window.location.reload();
      return;
    }
    say(`Tokens not changed: ${reply.error ?? status}`);
    if (reply.field) $(`[data-field="${reply.field}"]`)?.focus();
  }

  const word = () => S.selected;
  const actions = {
    "#split-word": () => send({ operation: "split-word", word: word(), at: Number($("#split-at").value) },
      `Split word ${word()}`),
    "#merge-words": () => send({ operation: "merge-words", word: word() }, `Merged words ${word()} and ${word() + 1}`),
    "#add-multiword": () => send({ operation: "add-multiword", first: word(), last: Number($("#mwt-last").value),
      form: $("#mwt-form").value }, "Made a multiword token"),
    "#remove-multiword": () => send({ operation: "remove-multiword", first: multiwordOf(word())?.[0] ?? word() },
      "Removed the multiword token"),
    "#split-sentence": () => send({ operation: "split-sentence", after: word() }, `Split the sentence after word ${word()}`),
    "#merge-sentence": () => send({ operation: "merge-sentence" }, "Merged with the next sentence"),
    "#undo-token-edit": () => send({ operation: "undo", edit_id: info.undo.id }, `Undid: ${info.undo?.what}`),
  };
  for (const [selector, action] of Object.entries(actions)) $(selector).addEventListener("click", action);
  $("#split-at").dataset.field = "at";
  $("#mwt-last").dataset.field = "last";
  $("#mwt-form").dataset.field = "form";

  const refusal = $("#tokens-refusal");
  refusal.hidden = !info.refusal;
  refusal.textContent = info.refusal ? `Read only: ${info.refusal}` : "";
  const done = sessionStorage.getItem("arcvote.tokens");
  if (done) { sessionStorage.removeItem("arcvote.tokens"); editor.say(`${done} The trees were carried over as new versions.`, "success"); }

  let shown = null;
  let named = null;
  /** The summary names the selected word; the rest is drawn only while the menu is open (a key's work stays small). */
  function render() {
    const w = word();
    const form = S.words[w - 1]?.form ?? "";
    if (named !== `${w} ${form}`) { named = `${w} ${form}`; $("#tokens-word").textContent = named; }
    if (!menu.open) return;
    const mwt = multiwordOf(w);
    const n = S.words.length;
    const off = Boolean(info.refusal);
    if (shown !== w) {  // new selection: sensible defaults
      shown = w;
      $("#split-at").max = String(Math.max(1, form.length - 1));
      $("#split-at").value = String(Math.max(1, Math.min(Number($("#split-at").value) || 1, form.length - 1)));
      $("#mwt-last").value = String(Math.min(w + 1, n));
      $("#mwt-last").min = String(w + 1);
      $("#mwt-form").value = S.words.slice(w - 1, w + 1).map((x) => x.form).join("");
    }
    $("#mwt-shown").textContent = mwt ? `${mwt[0]}-${mwt[1]} ${mwt[2]}` : "";
    $("#split-word").disabled = off || form.length < 2;
    $("#merge-words").disabled = off || w >= n;
    $("#add-multiword").disabled = off || w >= n || Boolean(mwt);
    $("#remove-multiword").disabled = off || !mwt;
    $("#split-sentence").disabled = off || w >= n;
    $("#merge-sentence").disabled = off || !info.has_next;
    const undo = $("#undo-token-edit");
    undo.disabled = off || !info.undo;
    undo.textContent = info.undo ? `Undo last token edit: ${info.undo.what}` : "Undo last token edit";
  }

  /** T: open the menu and focus its first enabled control. */
  function open() {
    menu.open = true;
    render();
    const first = [...menu.querySelectorAll("input, button")].find((node) => !node.disabled);
    (first ?? menu.querySelector("summary")).focus();
  }
  menu.addEventListener("toggle", () => { if (menu.open) render(); });
  render();
  return { render, open };
}
