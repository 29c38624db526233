import { randomInt } from "node:crypto";

/**
 * The owner handshake while no daemon runs: a 6-digit code is shown; the first private message holding
 * it (read with getUpdates) names the owner. Ten minutes, five wrong codes. The updates read here are
 * acknowledged, so the daemon does not answer them again.
 */
export async function pairByPolling(apiRoot: string, token: string, say: (line: string) => void, timeoutMs = 600_000) {
  try {
    return await pollForCode(apiRoot, token, say, timeoutMs);
  } catch (err) {
    // A network gone in the middle ends the pairing, not setup: the config is written, pairing can wait.
    const e = err as Error & { cause?: { code?: string } };
    say(`✗ Telegram could not be reached (${e.cause?.code ?? e.message}); pair later with \`hermes pair telegram\``);
    return undefined;
  }
}

async function pollForCode(apiRoot: string, token: string, say: (line: string) => void, timeoutMs: number) {
  const base = `${apiRoot.replace(/\/+$/, "")}/bot${token}`;
  const call = async (method: string, body: Record<string, unknown>) => {
    const res = await fetch(`${base}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(40_000),
    });
    return (await res.json()) as { ok: boolean; result?: unknown; description?: string };
  };
  // What waits from before the code was shown is no try at it (five old digits voided the pairing). Told by
  // update id, not by date: a computer's clock ahead of Telegram's set the code itself aside.
  let offset = await pastBacklog(call);
  const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
  say(`Send this code to your bot in a private chat, from your own Telegram account:\n\n    ${code}\n`);
  const end = Date.now() + timeoutMs;
  let wrong = 0;
  while (Date.now() < end) {
    const got = await call("getUpdates", {
      offset,
      timeout: Math.min(25, Math.ceil((end - Date.now()) / 1000)),
      allowed_updates: ["message"],
    });
    if (!got.ok) {
      say(`✗ getUpdates: ${got.description ?? "failed"} (is hermes running? then use \`hermes pair telegram\`)`);
      return undefined;
    }
    for (const u of got.result as {
      update_id: number;
      message?: { chat: { id: number; type: string }; from?: { id: number; first_name: string }; text?: string };
    }[]) {
      offset = u.update_id + 1;
      const m = u.message;
      if (!m?.from || m.chat.type !== "private" || !/^\d[\d ]{3,9}$/.test(m.text?.trim() ?? "")) continue;
      if (m.text?.replace(/ /g, "").trim() === code) {
        await call("sendMessage", { chat_id: m.chat.id, text: "You are paired: once hermes runs, write to me any time." });
        await call("getUpdates", { offset, timeout: 0 });
        return { id: String(m.from.id), name: m.from.first_name };
      }
      wrong += 1;
      await call("sendMessage", {
        chat_id: m.chat.id,
        text: wrong >= 5 ? "Five wrong codes: pairing void." : `That is not the code. ${5 - wrong} tries left.`,
      });
      if (wrong >= 5) {
        say("✗ five wrong codes: pairing void; pair later with `hermes pair telegram`");
        await call("getUpdates", { offset, timeout: 0 });
        return undefined;
      }
    }
  }
  say("✗ no code arrived in time; pair later with `hermes pair telegram`");
  return undefined;
}

/** The offset past the updates waiting now (0 when none, or when getUpdates fails: the poll then says why). */
async function pastBacklog(call: (method: string, body: Record<string, unknown>) => Promise<{ ok: boolean; result?: unknown }>) {
  let offset = 0;
  for (;;) {
    const got = await call("getUpdates", { offset, timeout: 0, allowed_updates: ["message"] });
    const ids = got.ok ? (got.result as { update_id: number }[]).map((u) => u.update_id) : [];
    if (ids.length === 0) return offset;
    offset = Math.max(...ids) + 1;
  }
}
