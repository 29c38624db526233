import { emailSchema } from "../../src/config/email-schema.js";
import { z } from "../../src/config/zod.js";

/**
 * The plugin's options: `connectors.email` (SPEC §18), and where attachments go (`<files_root>/inbox/`).
 * Made when asked for (a plugin's options are checked once, at its load), not kept for the daemon's life.
 */
export const emailOptions = () => z.intersection(emailSchema(), z.object({ files_root: z.string().optional() }));

export type EmailOptions = z.output<ReturnType<typeof emailOptions>>;
