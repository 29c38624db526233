import { randomBytes } from "./random.js";

/** A fresh run id, also for callers that must name a run before submitting it. */
export function newRunId(): string {
  return `run_${randomBytes(8).toString("hex")}`;
}
