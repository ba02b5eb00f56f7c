/**
 * The pre-annotation form and its progress bar: POST the job, then poll GET /jobs/<id>
 * until it is done (reload the queue) or failed (show the error).
 */

import { api } from "./api.js";

export function startJobs(form, box) {
  const bar = box.querySelector("#job-progress");
  const message = box.querySelector("#job-message");
  const jobUrl = (id) => form.dataset.jobs.replace(/0$/, String(id));

  function show(job) {
    bar.hidden = job.state === "failed";
    bar.value = job.progress;
    box.dataset.state = job.state;
    const percent = Math.round(job.progress * 100);
    message.textContent = job.state === "failed" ? `Failed: ${job.error}`
      : job.state === "done" ? `Done: ${job.message}` : `${percent}% · ${job.message}`;
    message.className = job.state === "failed" ? "field-error" : "meta";
  }

  async function poll(id) {
    const { ok, body } = await api(jobUrl(id));
    if (!ok) { message.textContent = body.error ?? "lost the job"; return; }
    show(body);
    if (body.state === "queued" || body.state === "running") setTimeout(() => poll(id), 700);
    else if (body.state === "done") setTimeout(() => window.location.reload(), 800);
  }

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
    form.querySelector('button[type="submit"]').disabled = true;
    const warm = form.querySelector('input[name="warm"]').checked;
    const payload = { parsers: parsers.join(","), tags, ensemble, self_training: selfTraining, warm };
    const { ok, body } = await api(form.dataset.url, { method: "POST", body: payload });
    if (!ok) { message.textContent = body.error; message.className = "field-error"; form.querySelector("button").disabled = false; return; }
    show(body.job);
    poll(body.job.id);
  });

  const last = JSON.parse(box.dataset.job || "null");
  if (last) {
    show(last);
    if (last.state === "queued" || last.state === "running") poll(last.id);
  }
}
