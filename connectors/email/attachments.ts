/**
 * A trusted mail's attachments, taken as files from the other connectors are (SPEC §12): saved in
 * `<files root>/inbox/` under a safe name, the model told each one's path, size and type. A file over the
 * 20 MB the other connectors take is not saved; the sender is told, and the model learns it was left out.
 */
import { formatSize, keepInInbox } from "../../src/media/inbox.js";
import { MAX_DOWNLOAD_BYTES } from "../../src/media/types.js";

/** A file attached to a mail, as mailparser decoded it. */
export interface Attachment {
  name: string;
  mime: string;
  bytes: Buffer;
}

export interface TakenFiles {
  /** A line for the model per attachment: where a kept one is, or that one was left out and why. */
  notes: string[];
  /** How many were saved. */
  kept: number;
  /** What to tell the sender about the ones not taken; empty when every one was. */
  refusals: string[];
}

const LIMIT = `${MAX_DOWNLOAD_BYTES / 1024 / 1024} MB`;

export async function takeAttachments(attachments: Attachment[], filesRoot: string | undefined): Promise<TakenFiles> {
  const taken: TakenFiles = { notes: [], kept: 0, refusals: [] };
  const refuse = (file: Attachment, toSender: string, forModel: string) => {
    taken.refusals.push(`I could not take ${file.name}: ${toSender}.`);
    taken.notes.push(
      `[attachment ${file.name} (${formatSize(file.bytes.length)}, ${file.mime || "unknown type"}) not taken: ${forModel}; the sender was told]`,
    );
  };
  for (const file of attachments) {
    if (file.bytes.length > MAX_DOWNLOAD_BYTES) {
      refuse(file, `it is over ${LIMIT}, the largest file I can take`, `over the ${LIMIT} limit`);
      continue;
    }
    if (!filesRoot) {
      refuse(file, "there is no files folder to save it in", "there is no files folder");
      continue;
    }
    try {
      taken.notes.push(await keepInInbox(filesRoot, file));
      taken.kept++;
    } catch (err) {
      const reason = `saving it failed (${(err as Error).message})`;
      refuse(file, `${reason}; send it again in a moment`, reason);
    }
  }
  return taken;
}
