import { accessSync, constants, readFileSync, writeFileSync } from "node:fs";
import { errorMessage } from "../errors.js";
import { addAllowedUser, type PairPlatform } from "./allowed-users.js";
import { Client } from "./client.js";
import { socketPathOf } from "./socket-path.js";

interface PairOptions {
  name?: string;
  timeoutS: number;
}

/**
 * `hermes pair telegram|discord`: the daemon shows the code's arrival; this process (the config file's
 * owner: `sudo hermes pair` for the service) writes the user into the file, has the daemon reload it,
 * and has the user told. A reload that refuses the file puts the old text back.
 */
export async function pair(configPath: string, platform: PairPlatform, options: PairOptions): Promise<number> {
  const fail = (message: string) => {
    process.stderr.write(`hermes: ${message}\n`);
    return 1;
  };
  try {
    accessSync(configPath, constants.R_OK | constants.W_OK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT")
      return fail(`no config file at ${configPath}: write one with \`hermes setup\`, or pass --config PATH to the daemon's`);
    return fail(`cannot write ${configPath}: run this as the file's owner (for the service: sudo hermes pair ${platform})`);
  }
  const client = await Client.connect(await socketPathOf(configPath));
  try {
    let outcome: { ok: boolean; message?: string; data?: unknown } | undefined;
    await client.stream({ op: "pair", connector: platform, timeout_s: options.timeoutS, name: options.name }, (reply) => {
      if (reply.type === "event" && reply.event.type === "pair_code") {
        process.stdout.write(
          `Send this code to the bot in a private chat, from the account to pair (within ${spanOf(Number(reply.event.timeout_s))}):\n\n    ${reply.event.code}\n\n`,
        );
        return false;
      }
      if (reply.type === "result") outcome = reply;
      if (reply.type === "error") outcome = { ok: false, message: reply.error.message };
      return true;
    });
    if (!outcome?.ok) return fail(outcome?.message ?? "the daemon closed the connection");
    const { id, name } = outcome.data as { id: string; name: string };
    const before = readFileSync(configPath, "utf8");
    try {
      writeFileSync(configPath, addAllowedUser(before, platform, id, name));
    } catch (err) {
      // The user was told "adding you now": they hear that it failed, not nothing.
      await client.call({ op: "pair_confirm", connector: platform, user_id: id, ok: false });
      return fail(`${errorMessage(err)}; ${restore(configPath, before)}`);
    }
    const reloaded = await client.call({ op: "reload" });
    const ok = reloaded.type === "result" && reloaded.ok;
    if (!ok) writeFileSync(configPath, before);
    await client.call({ op: "pair_confirm", connector: platform, user_id: id, ok });
    if (!ok) return fail(`the daemon refused the config with ${id} in it; the file is as it was`);
    process.stdout.write(`paired ${platform} user ${id} (${name}): added to connectors.${platform}.allowed_users in ${configPath}\n`);
    return 0;
  } finally {
    client.close();
  }
}

/** Puts the file's text back if a failed write changed it; says how the file is. */
function restore(configPath: string, before: string): string {
  try {
    if (readFileSync(configPath, "utf8") !== before) writeFileSync(configPath, before);
    return "the file is as it was";
  } catch (err) {
    return `and putting the file back failed too (${errorMessage(err)}): check ${configPath}`;
  }
}

/** A pairing's time to send the code, in words: `30 s`, `10 min`, `1 min 30 s` (never rounded to a span it does not have). */
export function spanOf(seconds: number): string {
  const whole = Math.max(1, Math.round(seconds));
  const [min, s] = [Math.floor(whole / 60), whole % 60];
  return [min ? `${min} min` : "", s ? `${s} s` : ""].filter(Boolean).join(" ");
}
