import { deliverProblem, deliveryTarget } from "./plugins-schema.js";
import { z } from "./zod.js";

/**
 * `connectors.http.openai`: the OpenAI-compatible API on the HTTP door (docs/openai.md).
 * `approvals_to` is where a gated tool call of an API run is asked; empty = only on the dashboard
 * (and `hermes approvals`).
 */
export const httpOpenAi = () =>
  z
    .strictObject({
      enabled: z.boolean().default(false),
      /** A chat the owner reads: any delivery target of jobs and hooks. */
      approvals_to: deliveryTarget().or(z.literal("")).default(""),
    })
    .prefault({});

interface Connectors {
  http: { enabled: boolean; openai: z.output<ReturnType<typeof httpOpenAi>> };
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
