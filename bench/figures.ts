// The table of `npm run bench`: every part records its figures here; run.ts prints the verdict and writes them.
import { round } from "./stats.js";

export interface Figure {
  name: string;
  value: number;
  unit: string;
  target?: { op: "<=" | ">="; value: number };
  note?: string;
  /** A ratio's floor, printed next to it. */
  floor?: string;
}

/** What a part of the bench reports through. */
export type Recorder = (f: Figure) => void;

export const figures: Figure[] = [];

export const meets = (f: Figure) => !f.target || (f.target.op === "<=" ? f.value <= f.target.value : f.value >= f.target.value);

export const record: Recorder = (f) => {
  figures.push(f);
  const status = !f.target ? "" : meets(f) ? "ok" : "MISSED";
  console.log(
    `  ${f.name.padEnd(52)} ${String(f.value).padStart(10)} ${f.unit.padEnd(6)} ${f.target ? `${f.target.op} ${f.target.value}` : ""} ${status}${f.floor ? `  (${f.floor})` : ""}`,
  );
};

/** Records `value` as a multiple of `floor`, with its target ratio, the absolute figure and the floor beside it. */
export function recordRatio(name: string, value: number, floor: number, target: number, floorName = "bare `node -e 0`"): void {
  record({
    name,
    value: round(value / floor, 2),
    unit: "×",
    target: { op: "<=", value: target },
    floor: `${round(value, 1)} ms; ${floorName} ${floor} ms`,
  });
}
