/** Entry point of the queue page: the pre-annotation forms (train a round; parse new text with
 * the newest round's models) and their job's progress. */
import { startJobs } from "./jobs.js";

startJobs(document.getElementById("preannotate-form"), document.getElementById("job"),
  document.getElementById("parse-new-form"));
