import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { defineTool } from "../src/tools/define.js";
import type { AnyTool, ToolDeps } from "../src/tools/types.js";
import { createJail } from "./files-jail.js";

const relPath = z.string().min(1).max(1024);

/** read_file, list_files and write_file, confined to `tools.files.root` (see files-jail.ts for how). */
export function createTool(name: ToolName, deps: ToolDeps): AnyTool {
  const { root, max_bytes: maxBytes } = deps.config.tools.files;
  const jail = createJail(root);
  switch (name) {
    case "read_file":
      return defineTool({
        name,
        description: 'Read a text file from the owner\'s files folder. Example: {"path": "todo.txt"}.',
        input: z.strictObject({ path: relPath }),
        readOnly: true,
        run: ({ path }) => jail.read(path, maxBytes),
      });
    case "list_files":
      return defineTool({
        name,
        description: 'List files and folders in the owner\'s files folder. Example: {} for the top, or {"path": "projects"}.',
        input: z.strictObject({ path: relPath.optional() }),
        readOnly: true,
        run: ({ path }) => jail.list(path ?? "."),
      });
    default:
      return defineTool({
        name: "write_file",
        description:
          'Create or overwrite a text file in the owner\'s files folder. Example: {"path": "shopping.txt", "content": "milk\\neggs"}.',
        input: z.strictObject({
          path: relPath,
          // In bytes, as written: a text of accented letters or emoji is two to four times its length.
          content: z
            .string()
            .max(maxBytes)
            .refine((s) => Buffer.byteLength(s) <= maxBytes, { message: `content is over tools.files.max_bytes (${maxBytes} bytes)` }),
        }),
        readOnly: false,
        run: ({ path, content }) => jail.write(path, content),
      });
  }
}
