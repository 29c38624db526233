import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { dateFormat } from "../src/time.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";

/** The current date, time and weekday, in the configured zone or another one. */
export function createTool(_name: ToolName, deps: ToolDeps) {
  return defineTool({
    name: "clock",
    description: 'Get the current date, time and weekday. Use before answering anything about "now", "today" or "tomorrow". Example: {}.',
    input: z.strictObject({ timezone: z.string().optional().describe("IANA zone; default: the owner's zone") }),
    readOnly: true,
    run: ({ timezone }) => formatNow(deps.now(), timezone ?? deps.config.timezone),
  });
}

export function formatNow(now: Date, timeZone: string): string {
  let formatted: string;
  try {
    formatted = dateFormat("en-GB", {
      timeZone,
      weekday: "long",
      year: "numeric",
      month: "long",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      timeZoneName: "short",
    }).format(now);
  } catch {
    throw new Error(`unknown time zone '${timeZone}'; use an IANA name such as Europe/Berlin`);
  }
  return `${formatted} (${timeZone}; ISO ${now.toISOString()})`;
}
