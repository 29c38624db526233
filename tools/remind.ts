import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { ToolError } from "../src/errors.js";
import { describeTime, parseLocalDateTime, zonedCron } from "../src/time.js";
import { defineTool } from "../src/tools/define.js";
import type { CallInfo, ToolDeps } from "../src/tools/types.js";
import { readUntrusted } from "./untrusted.js";

const input = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("create"),
    text: z.string().min(1).max(500),
    at: z.string().optional().describe('local time: "2026-11-30 18:00" or "18:00"'),
    in_minutes: z.number().positive().max(525_600).optional(),
    cron: z.string().optional().describe('repeat, as a cron expression: "0 9 * * 1" is Mondays 09:00'),
  }),
  z.strictObject({ action: z.literal("list") }),
  z.strictObject({ action: z.literal("cancel"), id: z.int().positive() }),
]);

/**
 * Reminders delivered to the chat they were created from; times read in the owner's zone and echoed in words.
 * A reminder's text comes back later (delivered, listed) as the owner's own, so setting one once the session
 * has read text from outside asks first, as a note does: a web page's words never become a reminder (and,
 * through the list, a fact) without a yes.
 */
export function createTool(_name: ToolName, deps: ToolDeps) {
  const zone = deps.config.timezone;
  const schedules = deps.store.schedules;
  return defineTool({
    name: "remind",
    description:
      'Create, list or cancel reminders for the owner, delivered to this chat. Give a local time, minutes from now, or a cron expression for repeats. Example: {"action": "create", "text": "call mum", "at": "18:00"}.',
    input,
    needsConfirmation: (args: z.output<typeof input>, call: CallInfo) =>
      args.action === "create" && readUntrusted(deps.store.history, call.runId),
    confirmReason:
      "a reminder repeats its text later as if it were yours: setting one after reading web pages, files, mail or tool results needs your yes",
    run: (args, ctx) => {
      const now = deps.now();
      switch (args.action) {
        case "create": {
          if ([args.at, args.in_minutes, args.cron].filter((v) => v !== undefined).length !== 1) {
            throw new ToolError('give exactly one of "at", "in_minutes" or "cron"');
          }
          if (deps.canDeliver && !deps.canDeliver(ctx.channel)) throw new ToolError(undeliverable(ctx.channel));
          if (args.cron) {
            const next = nextOf(args.cron, zone, now);
            // A seconds field ("* * * * * *") would message the chat every second: once a minute at most.
            if (nextOf(args.cron, zone, next).getTime() - next.getTime() < 60_000) {
              throw new ToolError(`"${args.cron}" repeats more often than once a minute; reminders repeat at most once a minute`);
            }
            const r = schedules.addReminder({ channel: ctx.channel, text: args.text, cron: args.cron, timezone: zone });
            return `Reminder #${r.id} set: "${args.text}", repeating (${args.cron}); next ${describeTime(next, zone, now)}.${cronOff(deps)}`;
          }
          const at =
            args.in_minutes !== undefined
              ? new Date(now.getTime() + args.in_minutes * 60_000)
              : parseLocalDateTime(args.at ?? "", zone, now);
          if (!at && /^\s*(\d{4}-\d{2}-\d{2}[T ])?\d{1,2}:\d{2}(:\d{2})?\s*$/.test(args.at ?? ""))
            throw new ToolError(`there is no such date or time as "${args.at}" (${zone}); check the day of the month and the hour`);
          if (!at) throw new ToolError(`cannot read the time "${args.at}"; use "YYYY-MM-DD HH:MM" or "HH:MM" (${zone})`);
          if (at.getTime() <= now.getTime()) throw new ToolError(`${describeTime(at, zone, now)} is in the past`);
          const r = schedules.addReminder({ channel: ctx.channel, text: args.text, at: at.getTime(), timezone: zone });
          return `Reminder #${r.id} set: "${args.text}" at ${describeTime(at, zone, now)}.${cronOff(deps)}`;
        }
        case "list": {
          const all = schedules.activeReminders().filter((r) => r.channel === ctx.channel);
          if (all.length === 0) return "No reminders.";
          return all
            .map((r) => {
              const next = r.cron ? nextOf(r.cron, r.timezone, now) : new Date(r.at ?? 0);
              return `#${r.id}: "${r.text}" ${r.cron ? `repeating (${r.cron}), next` : "at"} ${describeTime(next, r.timezone, now)}`;
            })
            .join("\n");
        }
        case "cancel": {
          const r = schedules.reminder(args.id);
          if (!r || r.channel !== ctx.channel || !schedules.cancel(args.id))
            throw new ToolError(`there is no active reminder #${args.id} in this chat`);
          return `Cancelled reminder #${args.id} ("${r.text}").`;
        }
      }
    },
  });
}

/** Why a reminder cannot be made in this conversation: nothing can send to it later (an HTTP request's, say). */
function undeliverable(channel: string): string {
  const api = channel.startsWith("api:") ? " (or the owner sets connectors.http.openai.approvals_to to a chat)" : "";
  return `a reminder made here could not be delivered: no connector can send a message to ${channel} later. Tell the user to ask for it in a chat such as Telegram${api}; nothing was set`;
}

function nextOf(expression: string, timezone: string, now: Date): Date {
  let next: Date | null;
  try {
    next = zonedCron(expression, timezone, { paused: true }).nextRun(now);
  } catch (err) {
    throw new ToolError(`"${expression}" is not a valid cron expression: ${(err as Error).message}`);
  }
  if (!next) throw new ToolError(`"${expression}" never fires`);
  return next;
}

function cronOff(deps: ToolDeps): string {
  return deps.config.connectors.cron.enabled
    ? ""
    : " (Note: the cron connector is off, so it will not fire until connectors.cron.enabled is true.)";
}
