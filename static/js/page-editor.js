/**
 * Entry point of the editor page: reads the sentence's data and the endpoint URLs from the
 * data-editor and data-urls attributes of #editor (JSON, written by the server) and starts the
 * editor. No inline script: the Content-Security-Policy allows scripts from the app only.
 */
import { startEditor } from "./editor.js";

const root = document.getElementById("editor");
window.arcvoteEditor = startEditor(root, JSON.parse(root.dataset.editor), JSON.parse(root.dataset.urls));
