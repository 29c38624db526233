export type Outcome = "ok" | "fail" | "warn" | "skip";
/** One line of `hermes doctor`: what was checked, how it went, and the fix when it did not. */
export interface Check {
  name: string;
  outcome: Outcome;
  detail: string;
  fix?: string;
}
