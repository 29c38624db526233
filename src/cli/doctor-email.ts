import type { Config } from "../config/schema.js";
import type { Check } from "./doctor-check.js";

/** The email connector's settings that deserve a word: trusting From: alone, or any server's Authentication-Results. */
export function checkEmail(config: Config): Check[] {
  const email = config.connectors.email;
  if (email.trust === "none") {
    return [
      {
        name: "email",
        outcome: "warn",
        detail: "connectors.email.trust is none: anyone who writes From: an allowed address reaches the model (From: is trivially forged)",
        fix: "set trust: authentication-results, with a receiving server that adds Authentication-Results (authserv_id: its name)",
      },
    ];
  }
  if (!email.authserv_id) {
    return [
      {
        name: "email",
        outcome: "warn",
        detail:
          "connectors.email.authserv_id is empty: the topmost Authentication-Results counts, and where the receiving server adds none, the sender's own does",
        fix: "set authserv_id to the name your receiving server writes in its Authentication-Results (see docs/email.md)",
      },
    ];
  }
  return [
    {
      name: "email",
      outcome: "ok",
      detail: `mail from ${email.allowed_senders.join(", ")} counts when ${email.authserv_id}'s Authentication-Results vouch for it`,
    },
  ];
}
