import { z } from "zod";
import { deliverProblem } from "./plugins-schema.js";

/** Where a gated call can be asked: a chat the owner reads (the delivery targets of jobs and hooks, plugins' included). */
const APPROVAL_TARGET = /^(telegram:-?\d+|discord:(user:)?\d+|cli:[\w.-]+|[a-z0-9_-]+:.+)$/;

/**
 * `connectors.http.openai`: the OpenAI-compatible API on the HTTP door (docs/openai.md).
 * `approvals_to` is where a gated tool call of an API run is asked; empty = only on the dashboard
 * (and `hermes approvals`).
 */
export const httpOpenAi = z
  .strictObject({
    enabled: z.boolean().default(false),
    approvals_to: z
      .string()
      .regex(APPROVAL_TARGET, "expected telegram:<chat_id>, discord:<channel_id>, discord:user:<id>, cli:<name> or <plugin>:<chat>")
      .or(z.literal(""))
      .default(""),
  })
  .prefault({});

interface Connectors {
  http: { enabled: boolean; openai: z.output<typeof httpOpenAi> };
  telegram: { enabled: boolean };
  discord: { enabled: boolean };
  cli: { enabled: boolean };
  email: { enabled: boolean };
  plugins: { name: string }[];
}

/** `approvals_to` must name a connector that is on, or nobody would ever see the question. */
export function checkHttpOpenAi(c: Connectors, ctx: z.RefinementCtx): void {
  const { enabled, approvals_to } = c.http.openai;
  if (!c.http.enabled || !enabled || !approvals_to) return;
  const problem = deliverProblem(c, approvals_to);
  if (problem) ctx.addIssue({ code: "custom", path: ["connectors", "http", "openai", "approvals_to"], message: problem });
}
