import type { HistoryStore } from "../src/store/history.js";

/**
 * Tools whose results come from hermes itself or from what the owner's own conversations stored: reading
 * them cannot plant a stranger's words in the model's context. Every other result (web pages, feeds,
 * calendars, files, shell output, MCP results, mail) may carry text someone else wrote. Notes count as the
 * owner's own because adding one after such text needs the owner's yes, as a fact does.
 */
const TRUSTED_RESULTS = new Set(["clock", "memory", "notes", "remind", "weather", "send_message"]);

/**
 * Whether the model, in this run's session, has seen text that someone other than the owner could have
 * written: a lasting write (a fact, a note) then needs the owner's yes, or a stranger's words would be read
 * back later as the owner's own. A webhook's payload and a reply delivered into the session (a job's or a
 * hook's) count too, though no tool result brought them.
 */
export function readUntrusted(history: HistoryStore, runId: string): boolean {
  const run = history.run(runId);
  if (!run) return true;
  if (run.source === "hook" || history.holdsForeignText(run.session_id)) return true;
  // The whole session, held or stored: an ephemeral run (the OpenAI door without `user`) and the context
  // its client sent count as much as a stored conversation.
  return history.toolResultNames(run.session_id).some((name) => !TRUSTED_RESULTS.has(name));
}
