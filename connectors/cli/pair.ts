import type { Core } from "../../src/connector.js";
import type { PairConnector } from "../../src/pairing.js";
import type { Reply } from "./protocol.js";

type Json = Record<string, unknown>;

const MAX_TIMEOUT_S = 3600;

/**
 * The socket's side of `hermes pair`: `pair` prints a code (an event) and ends with the user who sent
 * it; `reload` reads the config file again; `pair_confirm` tells that user whether it worked.
 */
export async function dispatchPairing(core: Core, id: string, req: Json, send: (reply: Reply) => void, closed: AbortSignal): Promise<void> {
  const result = (ok: boolean, message?: string, data?: unknown) => send({ v: 1, id, type: "result", ok, message, data });
  const bad = (message: string) => send({ v: 1, id, type: "error", error: { code: "bad_request", message } });
  if (req.op === "reload") {
    const ok = await core.reload();
    return result(ok, ok ? "config reloaded" : "the daemon refused the new config (its log says why); it keeps the running one");
  }
  const connector = req.connector;
  if (connector !== "telegram" && connector !== "discord") return bad('"connector" must be "telegram" or "discord"');
  if (req.op === "pair_confirm") {
    if (typeof req.user_id !== "string") return bad('"user_id" (string) is required');
    return result(await core.pairings.confirm(connector, req.user_id, req.ok !== false));
  }
  const timeoutS = typeof req.timeout_s === "number" && req.timeout_s > 0 ? Math.min(req.timeout_s, MAX_TIMEOUT_S) : 600;
  const name = typeof req.name === "string" && req.name.trim() ? req.name.trim() : undefined;
  if (!core.config().connectors[connector as PairConnector].enabled) {
    return result(false, `connectors.${connector} is not enabled in the running config: enable it (hermes setup) and reload first`);
  }
  const { code, outcome } = await core.pairings.start(connector, timeoutS * 1000, name);
  // `hermes pair` gone (Ctrl-C): its code goes with it, or someone who saw it could still send it.
  const gone = () => core.pairings.cancel(connector as PairConnector, code);
  if (closed.aborted) gone();
  else closed.addEventListener("abort", gone, { once: true });
  send({ v: 1, id, type: "event", event: { type: "pair_code", code, timeout_s: timeoutS } });
  const end = await outcome;
  closed.removeEventListener("abort", gone);
  core.log.info({ connector, ok: end.ok, ...(end.ok ? { userId: end.id } : { reason: end.reason }) }, "pairing ended");
  return end.ok ? result(true, `paired ${end.id}`, { id: end.id, name: end.name }) : result(false, `pairing void: ${end.reason}`);
}
