import { randomBytes } from "../random.js";

const ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/** The largest multiple of the alphabet's size under 256: bytes from it up are drawn again, so every letter is as likely. */
const FAIR = 256 - (256 % ALPHABET.length);

/**
 * A tool call's id as hermes makes it: nine letters and digits (~53 random bits), the strictest form a
 * chat template is known to demand (Mistral's refuses any other), so every endpoint takes it back in the
 * history. The agent loop gives every call one of these: an id an endpoint sent is never trusted to be unique.
 */
export function newCallId(): string {
  let id = "";
  while (id.length < 9) {
    for (const byte of randomBytes(12)) {
      if (byte < FAIR && id.length < 9) id += ALPHABET[byte % ALPHABET.length];
    }
  }
  return id;
}
