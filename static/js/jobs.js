/**
 * The pre-annotation form and its job box: POST the job, then poll GET /jobs/<id> until it is
 * done (reload the queue), failed or cancelled (show why, offer Retry). While it is queued or
 * running, Cancel asks it to stop (POST /jobs/<id>/cancel); Retry queues a failed or cancelled
 * job again (POST /jobs/<id>/retry). The job's log tail is under "Job log".
 */

import { api } from "./api.js";

export const ACTIVE = ["queued", "running"];

/** The one-line state of a job, as the job boxes show it. */
export function describe(job) {
  const percent = Math.round(job.progress * 100);
  if (job.state === "failed") return `Failed: ${job.error ?? job.message}`;
  if (job.state === "cancelled") return `Cancelled: ${job.message}`;
  if (job.state === "done") return `Done: ${job.message}`;
  if (job.cancel_requested) return `${percent}% · cancelling at the next step…`;
  return `${percent}% · ${job.message}`;
}

/**
 * Show ``job`` in a job box's elements {box, bar, message, cancel, retry, log}: progress,
 * state, message, and the Cancel/Retry buttons (only when ``mayControl``). Returns whether the
 * job is still active.
 */
export function showJob(elements, job, mayControl = true) {
  const { box, bar, message, cancel, retry, log } = elements;
  const active = ACTIVE.includes(job.state);
  bar.hidden = !active && job.state !== "done";
  bar.value = job.progress;
  box.dataset.state = job.state;
  message.textContent = describe(job);
  message.className = job.state === "failed" ? "field-error" : "meta";
  cancel.hidden = !active || job.cancel_requested || !mayControl;
  retry.hidden = !["failed", "cancelled"].includes(job.state) || !mayControl;
  log.textContent = job.log_tail ?? "";
  return active;
}

/**
 * Wire the pre-annotation ``form`` (and ``quick``, the form that parses new text with round
 * ``quick.dataset.round``'s models, when the page has it) to the job ``box``.
 */
export function startJobs(form, box, quick = null) {
  const bar = box.querySelector("#job-progress");
  const message = box.querySelector("#job-message");
  const cancel = box.querySelector("#job-cancel");
  const retry = box.querySelector("#job-retry");
  const details = document.getElementById("job-details");
  const log = document.getElementById("job-log");
  const submit = form.querySelector('button[type="submit"]');
  const jobUrl = (id) => form.dataset.jobs.replace(/0$/, String(id));
  let current = null;
  let polling = null;

  const quickSubmit = quick?.querySelector('button[type="submit"]');
  const quickBlocked = quickSubmit?.disabled ?? true;  // the server said why it cannot run

  function show(job) {
    current = job;
    submit.disabled = showJob({ box, bar, message, cancel, retry, log }, job);
    if (quickSubmit) quickSubmit.disabled = quickBlocked || submit.disabled;
    details.hidden = !job.log_tail;
  }

  function fail(text) {
    message.textContent = text;
    message.className = "field-error";
  }

  async function poll(id) {
    clearTimeout(polling);
    const { ok, body } = await api(jobUrl(id));
    if (!ok) { fail(body.error ?? "lost the job"); return; }
    if (current && current.id !== id) return;  // a retry replaced this job
    show(body);
    if (ACTIVE.includes(body.state)) polling = setTimeout(() => poll(id), 700);
    else if (body.state === "done") setTimeout(() => window.location.reload(), 800);
  }

  function follow(job) {
    show(job);
    poll(job.id);
  }

  // POST /jobs/<id>/<action> (cancel or retry) and follow the job it answers with.
  function onClick(button, action) {
    button.addEventListener("click", async () => {
      button.disabled = true;
      const { ok, body } = await api(`${jobUrl(current.id)}/${action}`, { method: "POST" });
      button.disabled = false;
      if (!ok) { fail(body.error); return; }
      follow(body.job);
    });
  }

  onClick(cancel, "cancel");
  onClick(retry, "retry");

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const parsers = [...form.querySelectorAll('input[name="parsers"]:checked')].map((i) => i.value);
    const tags = form.querySelector('select[name="tags"]').value;
    const ensemble = form.querySelector('select[name="ensemble"]').value;
    const selfTraining = {
      source: form.querySelector('select[name="self_training_source"]').value,
      select: form.querySelector('select[name="self_training_select"]').value,
      sentences: form.querySelector('input[name="self_training_sentences"]').value,
    };
    submit.disabled = true;
    const warm = form.querySelector('input[name="warm"]').checked;
    const rawText = form.querySelector('input[name="raw_text"]')?.checked ?? false;
    const externals = [...form.querySelectorAll('input[name="externals"]:checked')].map((i) => i.value);
    const payload = { parsers: parsers.join(","), tags, ensemble, self_training: selfTraining, warm, externals,
      raw_text: rawText };
    const { ok, body } = await api(form.dataset.url, { method: "POST", body: payload });
    if (!ok) { fail(body.error); submit.disabled = false; return; }
    follow(body.job);
  });

  quick?.addEventListener("submit", async (event) => {
    event.preventDefault();
    quickSubmit.disabled = submit.disabled = true;
    const { ok, body } = await api(quick.dataset.url, { method: "POST", body: { with_round: Number(quick.dataset.round) } });
    if (!ok) { fail(body.error); quickSubmit.disabled = quickBlocked; submit.disabled = false; return; }
    follow(body.job);
  });

  const last = JSON.parse(box.dataset.job || "null");
  if (last) {
    show(last);
    if (ACTIVE.includes(last.state)) poll(last.id);
  }
}
