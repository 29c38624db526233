import { z } from "zod";

/** Where a gated call can be asked: a chat the owner reads (the delivery targets of jobs and hooks). */
const APPROVAL_TARGET = /^(telegram:-?\d+|discord:(user:)?\d+|cli:[\w.-]+)$/;

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
      .regex(APPROVAL_TARGET, "expected telegram:<chat_id>, discord:<channel_id>, discord:user:<id> or cli:<name>")
      .or(z.literal(""))
      .default(""),
  })
  .prefault({});

interface Connectors {
  http: { enabled: boolean; openai: z.output<typeof httpOpenAi> };
  telegram: { enabled: boolean };
  discord: { enabled: boolean };
  cli: { enabled: boolean };
}

/** `approvals_to` must name a connector that is on, or nobody would ever see the question. */
export function checkHttpOpenAi(c: Connectors, ctx: z.RefinementCtx): void {
  const { enabled, approvals_to } = c.http.openai;
  const target = approvals_to.split(":")[0] as "telegram" | "discord" | "cli";
  // Also run for a target the regex refused (zod still refines the whole): such a one is reported there.
  if (!c.http.enabled || !enabled || !APPROVAL_TARGET.test(approvals_to) || c[target].enabled) return;
  ctx.addIssue({
    code: "custom",
    path: ["connectors", "http", "openai", "approvals_to"],
    message: `asks approvals in ${target}, but connectors.${target} is not enabled`,
  });
}
