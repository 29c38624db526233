/**
 * The tool contract. A tool is built by a factory that receives its dependencies; it never imports globals.
 * Rules:
 * - `run` may throw: the gate turns any throw or timeout into an error result for the model.
 * - `input` is always enforced by hermes (local model servers enforce nothing of a JSON Schema).
 * - `description` is written for a small model: when to use the tool, with an example argument.
 */
import type { z } from "zod";
import type { Config } from "../config/schema.js";
import type { SkillSet } from "../skills/types.js";
import type { Store } from "../store/store.js";

export interface ToolContext {
  signal: AbortSignal;
  sessionKey: string;
  /** Where the run's replies go: its chat, or a scheduled job's delivery target. */
  channel: string;
  runId: string;
  callId: string;
  /** The owner said yes to this very call (an approval), not merely the policy letting it through. */
  approved?: boolean;
}

/** What a per-call confirmation decision may know besides the arguments: the run the call belongs to. */
export interface CallInfo {
  runId: string;
}

export interface Tool<I = unknown> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  /** Read-only tools of one step may run concurrently; the rest run one by one in the model's order. */
  readOnly: boolean;
  /** True, or a per-call decision from the (validated) arguments and the run, when a human must say yes first. */
  needsConfirmation: boolean | ((args: I, call: CallInfo) => boolean | Promise<boolean>);
  maxResultChars: number;
  timeoutMs: number;
  run(args: I, ctx: ToolContext): Promise<string>;
  /** The model-facing JSON Schema, when it is not made from `input` (an MCP server's own schema). */
  parameters?: Record<string, unknown>;
  /** Where the tool comes from: absent for built-in tools, `mcp:<server>` for a server's. */
  source?: string;
  /** Why the tool asks first, in words, when `needsConfirmation` says it does. */
  confirmReason?: string;
}

export interface ToolDefinition<I> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  readOnly?: boolean;
  needsConfirmation?: boolean | ((args: I, call: CallInfo) => boolean | Promise<boolean>);
  confirmReason?: string;
  maxResultChars?: number;
  timeoutMs?: number;
  run(args: I, ctx: ToolContext): Promise<string> | string;
}

/** A tool of any input type: each one validates its own input before `run`. */
// biome-ignore lint/suspicious/noExplicitAny: tools are heterogeneous; each validates its own input
export type AnyTool = Tool<any>;

/** What a tool factory may use. */
export interface ToolDeps {
  config: Config;
  store: Store;
  /** The agent's clock; replaceable in tests. */
  now: () => Date;
  /** Sends text to a delivery target through the connectors (for send_message). */
  deliver?: (target: string, text: string) => Promise<{ messageId: string }>;
  /** Whether an enabled connector delivers to a target now (a reminder's chat, say). */
  canDeliver?: (target: string) => boolean;
  /** The skills loaded from `skills.dirs` now (for the `skill` tool). */
  skills?: () => SkillSet | undefined;
}

/** One line of `hermes tools`: a tool the model can see. */
export interface ToolReport {
  name: string;
  /** `built-in`, or `mcp:<server>`. */
  source: string;
  asks: "always" | "never" | "depends on the arguments";
  why: string | null;
  /** Estimated tokens its signature adds to every request. */
  prompt_tokens: number;
}

export const DEFAULT_MAX_RESULT_CHARS = 4000;
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
