import type { Core } from "../../src/connector.js";
import { statusLines } from "../chat.js";

const HELP =
  "I am hermes, an assistant on the owner's server. Just write to me.\n/new starts a fresh conversation, /compact summarises it so far, /stop stops what I am doing, /status shows whether everything works, /approve <id> and /deny <id> decide a request.";

/** The chat commands every connector answers the same way; resolves the reply. Never throws. */
export async function runCommand(core: Core, sessionKey: string, by: string, text: string): Promise<string> {
  const [word = "", arg = ""] = text.split(/\s+/);
  const command = word.slice(1).replace(/@.*$/, "").toLowerCase();
  switch (command) {
    case "start":
    case "help":
      return HELP;
    case "new":
      core.newSession(sessionKey);
      return "Started a new conversation.";
    case "compact":
      return (await core.compact(sessionKey)).message;
    case "stop":
      return core.stop(sessionKey) ? "Stopped." : "Nothing was running.";
    case "status":
      return statusLines(await core.status());
    case "approve":
    case "deny":
      if (!arg) return `Which request? Write /${command} <id>, with the id from the request.`;
      return core.decide(arg, command === "approve", by).message;
    default:
      return "I do not know that command. Try /help.";
  }
}
