/**
 * Media from the phone: what a connector fetched (bytes and what it knows of them) and what the
 * daemon makes of it. Connectors only fetch bytes and hand them to `intake`; the rules live here.
 * Rules:
 * - Nothing here throws to a connector: every failure is an `Intake` with a reply for the user.
 * - Nothing is fetched or sent anywhere for a stranger: connectors check `allowed_users` first.
 */

/** A file a user sent, as fetched by a connector. */
export interface Incoming {
  kind: "voice" | "image" | "file";
  bytes: Buffer;
  /** The file's name as sent (or a made-up one such as `voice.ogg`). */
  name: string;
  /** Its MIME type as the chat network reports it; empty when unknown. */
  mime: string;
  /** Voice notes: the length the chat network reports, in seconds. */
  durationS?: number;
  /** What the user wrote with it (a caption). */
  caption?: string;
}

/**
 * What becomes of an incoming file:
 * - `message`: submit `text` (and `images`) as the user's message; `echo`, when set, is shown in the chat first;
 * - `reply`: nothing for the model; tell the user `text` (a refusal, a failure, how to set something up).
 */
export type Intake = { type: "message"; text: string; images?: string[]; echo?: string } | { type: "reply"; text: string };

/** The transcript of a voice note, or why there is none. */
export type Transcript = { ok: true; text: string } | { ok: false; message: string };

/** An image's type and size, read from its first bytes. */
export interface ImageInfo {
  mime: "image/jpeg" | "image/png" | "image/gif" | "image/webp";
  ext: string;
  width: number;
  height: number;
}

/** The Bot API serves downloads up to 20 MB; hermes holds other files to the same limit. */
export const MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;

/** Room kept in the context for each image of a turn (vision models spend ~250–1,600 tokens on one at up to 1568 px). */
export const IMAGE_TOKENS = 1000;
