/** Entry point of the queue page: the pre-annotation form and its job's progress. */
import { startJobs } from "./jobs.js";

startJobs(document.getElementById("preannotate-form"), document.getElementById("job"));
