import { errorMessage } from "../errors.js";
import type { AnyTool, ToolContext } from "../tools/types.js";

export { summarize, truncateResult } from "../text.js";

export interface InvokeResult {
  ok: boolean;
  content: string;
  durationMs: number;
}

/** Runs one tool with its timeout and the run's abort signal. Never throws. */
export async function invokeTool(tool: AnyTool, args: unknown, ctx: ToolContext): Promise<InvokeResult> {
  const started = performance.now();
  const controller = new AbortController();
  const onAbort = () => controller.abort(ctx.signal.reason);
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`timed out after ${tool.timeoutMs / 1000} s`);
      controller.abort(error);
      reject(error);
    }, tool.timeoutMs);
    controller.signal.addEventListener("abort", () => reject(new Error(abortText(controller.signal.reason))), { once: true });
  });
  try {
    const content = await Promise.race([tool.run(args, { ...ctx, signal: controller.signal }), stopped]);
    return { ok: true, content: String(content), durationMs: performance.now() - started };
  } catch (err) {
    return { ok: false, content: `error: ${errorMessage(err)}`, durationMs: performance.now() - started };
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
    stopped.catch(() => {});
  }
}

function abortText(reason: unknown): string {
  return reason instanceof Error ? reason.message : "cancelled";
}
