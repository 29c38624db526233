import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { ToolError } from "../src/errors.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";
import type { Resolver } from "./net.js";

/** The network code (and ipaddr.js), loaded by the first call: a start does not pay for it. */
const net = () => import("./net.js");

/**
 * Fetches a web page as text. A URL that leads to a loopback, private or link-local address needs the
 * owner's yes (unless listed in tools.http_get.allow), so a page cannot steer hermes into the LAN.
 */
export function createTool(_name: ToolName, deps: ToolDeps, resolve?: Resolver) {
  const settings = deps.config.tools.http_get;
  return defineTool({
    name: "http_get",
    description:
      'Fetch a web page or API URL and read it as text. Use for a specific URL the owner mentions or one you found. Example: {"url": "https://example.com/news"}.',
    input: z.strictObject({ url: z.url({ protocol: /^https?$/, message: "expected an http(s) URL" }) }),
    readOnly: true,
    needsConfirmation: async ({ url }) => (await net()).needsPrivateConsent(url, settings.allow, resolve),
    run: async ({ url }, ctx) => {
      // Only the owner's yes to this very call lets it reach a private address of its own host; a fresh
      // lookup here would let a name that turned private after the check walk past the question.
      const consented = ctx.approved ? new Set([new URL(url).hostname]) : new Set<string>();
      const page = await (await net()).safeGet(url, {
        maxBytes: settings.max_bytes,
        timeoutMs: (settings.timeout_s ?? 20) * 1000,
        signal: ctx.signal,
        allow: settings.allow,
        consented,
        resolve,
      });
      if (page.status >= 400) throw new ToolError(`${page.url} answered HTTP ${page.status}`);
      const text = await toText(page.body.toString("utf8"), page.contentType);
      const cut = page.truncated ? `\n[… page cut at ${settings.max_bytes} bytes${page.totalBytes ? ` of ${page.totalBytes}` : ""} …]` : "";
      return `${page.url} (HTTP ${page.status}, ${page.contentType.split(";")[0] || "unknown type"})\n\n${text}${cut}`;
    },
  });
}

export async function toText(body: string, contentType: string): Promise<string> {
  if (/html/i.test(contentType) || /^\s*<(!doctype|html)/i.test(body)) {
    // Loaded on first use: most runs never fetch a page, and start-up time and idle memory matter more.
    const { convert } = await import("html-to-text");
    return convert(body, {
      wordwrap: false,
      selectors: [
        { selector: "a", options: { hideLinkHrefIfSameAsText: true, ignoreHref: false } },
        { selector: "img", format: "skip" },
        { selector: "script", format: "skip" },
        { selector: "style", format: "skip" },
        { selector: "nav", format: "skip" },
        // html-to-text shouts headings and table headers by default; names and codes must keep their case.
        ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({ selector, options: { uppercase: false } })),
        { selector: "table", options: { uppercaseHeaderCells: false } },
      ],
    }).trim();
  }
  if (/json/i.test(contentType)) {
    try {
      return JSON.stringify(JSON.parse(body), null, 1);
    } catch {
      return body;
    }
  }
  return body;
}
