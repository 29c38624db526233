/** Discord attachments: fetched here and handed to src/media, which says what becomes of them. */
import type { Config } from "../../src/config/schema.js";
import { intake, refuseBeforeDownload } from "../../src/media/intake.js";
import { type Incoming, type Intake, MAX_DOWNLOAD_BYTES } from "../../src/media/types.js";
import { readUpTo } from "../../src/net/body.js";

/** What hermes keeps of an attachment (recorded with the message, so a replay after a restart can fetch it again). */
export interface AttachmentInfo {
  url: string;
  name: string;
  contentType: string;
  size: number;
  durationS?: number;
}

const IMAGE_TYPES = /^image\/(jpeg|png|webp|gif)\b/;

function kindOf(a: AttachmentInfo): Incoming["kind"] {
  if (a.contentType.startsWith("audio/")) return "voice";
  if (IMAGE_TYPES.test(a.contentType)) return "image";
  return "file";
}

/** The first attachment of a message (with the message text as its caption) becomes the user's message, or a reply. */
export async function takeAttachments(config: Config, attachments: AttachmentInfo[], caption: string): Promise<Intake> {
  const first = attachments[0] as AttachmentInfo;
  const kind = kindOf(first);
  const refused = refuseBeforeDownload(config, kind, first.size, first.durationS);
  if (refused) return { type: "reply", text: refused };
  let bytes: Buffer | undefined;
  try {
    const res = await fetch(first.url, { signal: AbortSignal.timeout(120_000) });
    if (!res.ok)
      return { type: "reply", text: `I could not fetch ${first.name} from Discord (HTTP ${res.status}). Send it again in a moment.` };
    // The size the message reports is not what the download holds: it is read up to the limit only.
    bytes = await readUpTo(res, MAX_DOWNLOAD_BYTES);
  } catch (err) {
    return { type: "reply", text: `I could not fetch ${first.name} from Discord: ${(err as Error).message}. Send it again in a moment.` };
  }
  if (!bytes) return { type: "reply", text: "That file is over 20 MB; I can take files up to 20 MB." };
  const outcome = await intake(
    { kind, bytes, name: first.name, mime: first.contentType.split(";")[0] ?? "", durationS: first.durationS, caption },
    config,
  );
  if (outcome.type === "message" && attachments.length > 1) {
    return { ...outcome, text: `${outcome.text}\n[${attachments.length - 1} more attachment(s) were not taken: send one at a time]` };
  }
  return outcome;
}
