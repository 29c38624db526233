// The floors of the start and `ask` figures: bare `node -e 0` processes spawned as hermes is.
import { spawn } from "node:child_process";
import { runNode } from "../test/helpers/hermes.js";
import { median, round, timesOf } from "./stats.js";

/**
 * Variables that change what Node does at every start, dropped for the processes whose start is timed.
 * NODE_EXTRA_CA_CERTS makes Node parse a certificate bundle before any code runs (~70 ms on a machine
 * that sets it for the whole system); neither systemd nor a usual login shell sets them.
 */
export const NODE_START_VARS = ["NODE_EXTRA_CA_CERTS", "NODE_OPTIONS"] as const;
export const setHere = NODE_START_VARS.filter((v) => process.env[v] !== undefined);
export const cleanEnv: NodeJS.ProcessEnv = Object.fromEntries(NODE_START_VARS.map((v) => [v, undefined]));

/**
 * How a timed process is spawned, and so its floor: `hermes start` with its output ignored, the CLI
 * with stdin, stdout and stderr piped and read (`runCli`). Pipes cost the parent and the child ~1–2 ms here.
 */
export type Stdio = "ignore" | "piped";

const spawnBare =
  (env: NodeJS.ProcessEnv, stdio: Stdio, flags: readonly string[] = []) =>
  () =>
    stdio === "piped"
      ? runNode([...flags, "-e", "0"], { env })
      : new Promise((done) =>
          spawn(process.execPath, [...flags, "-e", "0"], { stdio: "ignore", env: { ...process.env, ...env } }).on("close", done),
        );

/** Milliseconds of a bare `node -e 0`, spawned as the timed processes are: the floor of start and `ask`. */
export async function bareNodeMs(env: NodeJS.ProcessEnv = cleanEnv, stdio: Stdio = "ignore", n = 20): Promise<number> {
  return round(median(await timesOf(n, spawnBare(env, stdio))), 1);
}

/**
 * The floor sampled between the timed runs (one bare `node -e 0` before each): on a shared machine whose
 * speed drifts within a minute, a neighbour's load then slows the floor and the figure alike.
 */
export class Floor {
  private readonly samples: number[] = [];
  /** `flags` and `env`: the Node flags and environment the timed process gets (the daemon: the systemd unit's). */
  constructor(
    private readonly stdio: Stdio = "ignore",
    private readonly flags: readonly string[] = [],
    private readonly env: NodeJS.ProcessEnv = {},
  ) {}
  async sample(): Promise<void> {
    this.samples.push(...(await timesOf(1, spawnBare({ ...cleanEnv, ...this.env }, this.stdio, this.flags))));
  }
  get ms(): number {
    return round(median(this.samples), 1);
  }
}

/** `n` timings of `run`, each after one sample of `floor`. */
export async function timesAbove(floor: Floor, n: number, run: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    await floor.sample();
    times.push(...(await timesOf(1, run)));
  }
  return times;
}
