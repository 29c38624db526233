/** Button presses and menu commands: the parts of the flow a network answers itself (a callback, an interaction). */
import { parseApprovalButton } from "../sdk/buttons.js";
import { runCommand, skillRequest } from "./commands.js";
import { whoamiText } from "./menu.js";
import { decidedText, type RenderDeps, showDecision } from "./render.js";
import type { ChatFlow, ChatFlowDeps, ChatMessage } from "./types.js";

interface PressDeps extends ChatFlowDeps {
  render: RenderDeps;
  handle(m: ChatMessage): Promise<void>;
  sessionKey(m: ChatMessage): string;
}

/** A button hermes made: the SDK's ids, or `a:<id>` / `d:<id>` on messages sent before the chat core was shared. */
export function parseButton(button: unknown): { approve: boolean; approvalId: string } | undefined {
  if (typeof button !== "string") return undefined;
  const legacy = /^([ad]):(.+)$/.exec(button);
  return legacy?.[2] ? { approve: legacy[1] === "a", approvalId: legacy[2] } : parseApprovalButton(button);
}

/** A user or chat id as a network may give it: a non-empty string or a finite number. */
export function isId(value: unknown): value is string | number {
  return (typeof value === "string" && value !== "") || (typeof value === "number" && Number.isFinite(value));
}

export function createPressHandlers(deps: PressDeps): Pick<ChatFlow, "press" | "command"> {
  const { core, name, log, render } = deps;

  const press: ChatFlow["press"] = async (p, answer = async () => {}) => {
    const button = parseButton(p?.button);
    if (!button) {
      log.warn({ button: p?.button }, "a press of a button hermes did not send was ignored");
      return void (await answer({ kind: "unknown" }));
    }
    // The same ids a message may come from: a press by no one (an empty or missing id, a list) decides nothing.
    if (!isId(p.user) || !deps.allowed(String(p.user))) {
      log.warn({ user: p.user, approvalId: button.approvalId }, "approval button pressed by a user not in allowed_users; ignored");
      return void (await answer({ kind: "refused", text: "Only the owner can decide this." }));
    }
    const by = `${name}:${p.by ?? p.user}`;
    if (deps.surface.pressShowsDecision) render.pressed.add(button.approvalId);
    const result = (() => {
      try {
        return core.decide(button.approvalId, button.approve, by);
      } finally {
        render.pressed.delete(button.approvalId);
      }
    })();
    if (result.ok) {
      const shown = decidedText(render, button.approvalId, result.approval.status as "approved" | "denied", by) ?? result.message;
      return void (await answer({ kind: "decided", text: result.message, shown }));
    }
    await answer({ kind: "closed", text: result.message });
    if (result.approval && result.approval.status !== "pending") {
      const { id, status, decided_by } = result.approval;
      await showDecision(render, id, status as "approved" | "denied" | "expired", decided_by ?? "");
    }
  };

  const command: ChatFlow["command"] = async (m, answer) => {
    const text = m.text.trim();
    if (deps.platform && /^\/whoami\b/.test(text))
      return void (await answer({ kind: "reply", text: whoamiText(deps.platform, m.user, deps.allowed(m.user)), onlySender: true }));
    if (!deps.allowed(m.user)) {
      log.warn({ user: m.user, command: text.split(/\s/)[0] }, "slash command from a user not in allowed_users ignored");
      const notice = `This is a private assistant. Your ${deps.platform ?? name} id is ${m.user}.`;
      return void (await answer({ kind: "reply", text: notice, onlySender: true }));
    }
    if (skillRequest(core, text) !== undefined) {
      await answer({ kind: "run" });
      return deps.handle(m);
    }
    // A summary, and a status that probes the speech and model servers (5 s each at most), take longer than
    // some networks give a command's first answer (Discord: 3 s).
    if (/^\/(compact|status)\b/.test(text)) await answer({ kind: "slow" });
    const by = `${name}:${m.user}`;
    await answer({ kind: "reply", text: await runCommand(core, deps.sessionKey(m), by, text, deps.texts?.help?.(m.user)) });
  };

  return {
    press: (p, answer) => press(p, answer).catch((err: unknown) => log.error({ err }, "button press failed")),
    command,
  };
}
