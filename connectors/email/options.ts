import { emailSchema } from "../../src/config/email-schema.js";
import { z } from "../../src/config/zod.js";

/** The plugin's options: `connectors.email` (SPEC §18), and where attachments go (`<files_root>/inbox/`). */
export const emailOptions = z.intersection(emailSchema(), z.object({ files_root: z.string().optional() }));

export type EmailOptions = z.output<typeof emailOptions>;
