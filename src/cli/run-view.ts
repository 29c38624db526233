import type { AskFile, Reply } from "../../connectors/cli/protocol.js";
import type { Client } from "./client.js";
import { createSpinner, createStyle, formatDuration, plainLine, shortArgs } from "./render.js";

export type Confirm = (prompt: string) => Promise<boolean>;

export interface RunViewOptions {
  json: boolean;
  /** Print text as it streams (chat) or only the final reply (ask). */
  stream: boolean;
  /** Decides approval requests: --yes, --no, a [y/N] prompt, or "no" without a TTY. */
  confirm: Confirm;
  /** Where the reply and the run's progress go; process.stdout and process.stderr when not given. */
  out?: NodeJS.WriteStream;
  err?: NodeJS.WriteStream;
  /** An uploaded file the message carries (`hermes ask --audio/--image`). */
  file?: AskFile;
}

export interface RunEnd {
  reply: string;
  stopReason: string;
}

/**
 * Sends one message and renders its run until `done`. The request is written first: the daemon works on it
 * while this process sets up its output (process.stdout and stderr are built on first use).
 */
export async function runMessage(client: Client, session: string, text: string, o: RunViewOptions): Promise<RunEnd> {
  let end: RunEnd = { reply: "", stopReason: "error" };
  let streamed = false;
  const decisions: Promise<void>[] = [];
  // One question at a time: a terminal has one input line, and readline keeps no second question open.
  let asking: Promise<void> = Promise.resolve();
  // Replies come from the socket's data events (Client.stream), after everything below is set up.
  const finished = client.stream({ op: "ask", session, text, ...(o.file && { file: o.file }) }, (reply: Reply) => {
    if (o.json) out.write(`${JSON.stringify(jsonLine(reply))}\n`);
    if (reply.type === "error") {
      end = { reply: reply.error.message, stopReason: "error" };
      return true;
    }
    if (reply.type === "done") {
      end = { reply: reply.reply, stopReason: reply.stop_reason };
      return true;
    }
    if (reply.type !== "event") return false;
    const e = reply.event as Record<string, unknown> & { type: string };
    if (e.type === "approval_requested") {
      spinner.stop();
      const decision = asking.then(() => decide(client, e, o, err));
      asking = decision.catch(() => {});
      decisions.push(decision);
      return false;
    }
    if (o.json) return false;
    switch (e.type) {
      case "text":
        if (o.stream) {
          spinner.stop();
          out.write(String(e.delta));
          streamed = true;
        }
        break;
      case "tool_call":
        spinner.stop();
        if (streamed) out.write("\n");
        streamed = false;
        err.write(style.dim(`  ⋯ ${plainLine(String(e.tool))} ${shortArgs(e.args)}\n`));
        break;
      case "tool_result":
        err.write(
          `  ${e.ok ? style.green("✓") : style.red("✗")} ${plainLine(String(e.tool))} ${style.dim(formatDuration(Number(e.durationMs)))}\n`,
        );
        spinner.start("thinking");
        break;
      case "transcript":
        spinner.stop();
        err.write(`${e.text}\n`);
        spinner.start("thinking");
        break;
      case "blocked":
        err.write(`  ${style.yellow("⊘")} ${plainLine(String(e.tool))} ${style.dim(`blocked: ${plainLine(String(e.reason))}`)}\n`);
        break;
      case "notice":
        // Without streaming the reply carries the notice in its first line.
        if (o.stream) err.write(style.dim(`  ⓘ ${e.text}\n`));
        break;
      case "approval_decided":
        err.write(
          `  ${e.decision === "approved" ? style.green("✓") : style.red("✗")} ${plainLine(String(e.tool))} ${e.decision} by ${e.by}\n`,
        );
        break;
    }
    return false;
  });
  const out = o.out ?? process.stdout;
  const err = o.err ?? process.stderr;
  // Every styled line goes to stderr: colour follows it, not stdout (`hermes ask … 2>run.log` on a terminal).
  const style = createStyle(err.isTTY === true);
  const spinner = createSpinner(err);
  if (!o.json) spinner.start("thinking");
  try {
    await finished;
  } catch (err) {
    // `--json`'s last line is `done` or `error` (SPEC §2), also when the daemon goes away mid-run.
    if (o.json) out.write(`${JSON.stringify(errorLine("connection_lost", err))}\n`);
    throw Object.assign(err as object, { reportedAsJson: o.json });
  } finally {
    spinner.stop();
  }
  await Promise.all(decisions);
  if (!o.json) {
    if (o.stream && streamed && end.stopReason === "done") out.write("\n");
    else out.write(`${end.reply}\n`);
  }
  return end;
}

async function decide(client: Client, e: Record<string, unknown>, o: RunViewOptions, err: NodeJS.WriteStream): Promise<void> {
  const approve = await o.confirm(String(e.prompt ?? `Run ${e.tool}?`));
  const reply = await client.call({ op: "decide", approval_id: String(e.approvalId), approve });
  if (!o.json && reply.type === "result" && !reply.ok) err.write(`${reply.message}\n`);
}

/** The `error` line `--json` ends with when the run could not be followed to its end. */
export function errorLine(code: string, err: unknown): { type: "error"; code: string; message: string } {
  return { type: "error", code, message: err instanceof Error ? err.message : String(err) };
}

function jsonLine(reply: Reply): unknown {
  switch (reply.type) {
    case "event":
      return reply.event;
    case "done":
      return { type: "done", run_id: reply.run_id, reply: reply.reply, stop_reason: reply.stop_reason };
    case "error":
      return { type: "error", code: reply.error.code, message: reply.error.message };
    default:
      return reply;
  }
}
