/** The connectors an owner can pair from. */
export type PairConnector = "telegram" | "discord";

/** What `offer` gets from a chat connector: a private message from someone not allowed yet. */
export interface PairOffer {
  connector: PairConnector;
  userId: string;
  /** The name the platform shows for the user: used when `hermes pair` was given no --name. */
  displayName: string;
  text: string;
  reply(text: string): Promise<unknown>;
}

export type PairOutcome = { ok: true; id: string; name: string } | { ok: false; reason: string };

/** Five wrong codes void a pairing. */
export const MAX_WRONG_CODES = 5;

interface Open {
  code: string;
  name?: string;
  wrong: number;
  timer: NodeJS.Timeout;
  settle(outcome: PairOutcome): void;
}

/**
 * The owner handshake (`hermes pair`): one open code per connector. The first private message holding
 * exactly the code, from a user who is not allowed yet, settles it; five wrong codes or the timeout void
 * it. The config file is written by the `hermes pair` process (it runs as the file's owner, the daemon
 * may not), which then reloads the daemon and has the user told through `confirm`.
 */
export class Pairings {
  private readonly open = new Map<PairConnector, Open>();
  private readonly paired = new Map<string, (text: string) => Promise<unknown>>();

  /** node:crypto is loaded here, at the first pairing: an idle daemon does not load it (see the footprint test). */
  async start(connector: PairConnector, timeoutMs: number, name?: string): Promise<{ code: string; outcome: Promise<PairOutcome> }> {
    const { randomInt } = await import("node:crypto");
    this.open.get(connector)?.settle({ ok: false, reason: "a newer pairing replaced this one" });
    const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
    const outcome = new Promise<PairOutcome>((resolve) => {
      const entry: Open = {
        code,
        name,
        wrong: 0,
        timer: setTimeout(() => entry.settle({ ok: false, reason: `no code arrived within ${Math.round(timeoutMs / 1000)} s` }), timeoutMs),
        settle: (result) => {
          clearTimeout(entry.timer);
          if (this.open.get(connector) === entry) this.open.delete(connector);
          resolve(result);
        },
      };
      entry.timer.unref();
      this.open.set(connector, entry);
    });
    return { code, outcome };
  }

  /** Ends an open pairing (its `hermes pair` went away); with `code`, only the pairing of that code. */
  cancel(connector: PairConnector, code?: string): void {
    const entry = this.open.get(connector);
    if (entry && (code === undefined || entry.code === code)) entry.settle({ ok: false, reason: "cancelled" });
  }

  /**
   * A stranger's private message while a pairing is open. True when it was taken as an attempt (a
   * message of digits): the connector answers nothing more. Other messages get the usual stranger notice.
   */
  async offer(o: PairOffer): Promise<boolean> {
    const entry = this.open.get(o.connector);
    const text = o.text.trim();
    if (!entry || !/^\d[\d ]{3,9}$/.test(text)) return false;
    if (text.replace(/ /g, "") === entry.code) {
      this.paired.set(`${o.connector}:${o.userId}`, o.reply);
      entry.settle({ ok: true, id: o.userId, name: entry.name ?? o.displayName });
      await o.reply("Code accepted; adding you now…");
      return true;
    }
    entry.wrong += 1;
    if (entry.wrong >= MAX_WRONG_CODES) {
      entry.settle({ ok: false, reason: `${MAX_WRONG_CODES} wrong codes` });
      await o.reply("That is not the code. Five wrong codes: this pairing is void; the owner can start a new one.");
    } else {
      await o.reply(`That is not the code. ${MAX_WRONG_CODES - entry.wrong} tries left.`);
    }
    return true;
  }

  /** Tells a just-paired user the outcome, once the config with them in it is loaded (or not). */
  async confirm(connector: PairConnector, userId: string, ok: boolean): Promise<boolean> {
    const reply = this.paired.get(`${connector}:${userId}`);
    this.paired.delete(`${connector}:${userId}`);
    if (!reply) return false;
    await reply(ok ? "You are paired: write to me any time. /help shows what I can do." : "Pairing failed on the server; ask the owner.");
    return true;
  }
}
