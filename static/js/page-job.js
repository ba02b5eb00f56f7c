/**
 * Entry point of the job page (a large import or export running in the background): poll
 * GET /jobs/<id> until the job ends; then reveal what it made (the imported document's link or
 * the export's download link, rendered by the server and hidden until then). Cancel and Retry
 * post to /jobs/<id>/cancel and /jobs/<id>/retry; a retry opens the new job's page.
 */
import { api } from "./api.js";
import { ACTIVE, showJob } from "./jobs.js";

const box = document.getElementById("job");
const bar = document.getElementById("job-progress");
const message = document.getElementById("job-message");
const cancel = document.getElementById("job-cancel");
const retry = document.getElementById("job-retry");
const log = document.getElementById("job-log");
const outcome = document.getElementById("job-outcome");
let current = JSON.parse(box.dataset.job);

function show(job) {
  current = job;
  showJob({ box, bar, message, cancel, retry, log }, job, box.dataset.mayCancel === "1");
}

async function poll() {
  const { ok, body } = await api(box.dataset.url);
  if (!ok) { message.textContent = body.error ?? "lost the job"; return; }
  show(body);
  if (ACTIVE.includes(body.state)) setTimeout(poll, 700);
  else if (body.state === "done") window.location.reload();  // the server renders the outcome
}

cancel.addEventListener("click", async () => {
  cancel.disabled = true;
  const { ok, body } = await api(`${box.dataset.url}/cancel`, { method: "POST" });
  cancel.disabled = false;
  if (ok) show(body.job); else message.textContent = body.error;
});

retry.addEventListener("click", async () => {
  retry.disabled = true;
  const { ok, body } = await api(`${box.dataset.url}/retry`, { method: "POST" });
  if (ok) window.location.assign(box.dataset.page.replace(/0$/, String(body.job.id)));
  else { retry.disabled = false; message.textContent = body.error; }
});

show(current);
if (ACTIVE.includes(current.state) && !outcome) poll();
