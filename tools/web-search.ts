import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { ToolError } from "../src/errors.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";

/** The network code (and ipaddr.js), loaded by the first call: a start does not pay for it. */
const net = () => import("./net.js");

interface SearxResult {
  title?: string;
  url?: string;
  content?: string;
}

/** Web search through the owner's SearXNG instance (its JSON API). */
export function createTool(_name: ToolName, deps: ToolDeps) {
  const s = deps.config.tools.web_search;
  return defineTool({
    name: "web_search",
    description: 'Search the web and get the top results (title, link, snippet). Example: {"query": "opening hours Berlin zoo"}.',
    input: z.strictObject({ query: z.string().min(1).max(300), count: z.int().min(1).max(10).optional() }),
    readOnly: true,
    run: async ({ query, count }, ctx) => {
      if (!s.url)
        throw new ToolError("no search engine configured: set tools.web_search.url to a SearXNG instance with the JSON format enabled");
      const url = `${s.url.replace(/\/+$/, "")}/search?${new URLSearchParams({ q: query, format: "json" })}`;
      const body = JSON.parse(
        await (await net()).fetchConfigured(url, {
          signal: ctx.signal,
          timeoutMs: (s.timeout_s ?? 15) * 1000,
          allow: deps.config.tools.http_get.allow,
        }),
      ) as {
        results?: SearxResult[];
      };
      const results = (body.results ?? []).slice(0, count ?? 5);
      if (results.length === 0) return `No results for "${query}".`;
      return results
        .map(
          (r, i) =>
            `${i + 1}. ${r.title ?? "(untitled)"} — ${r.url ?? ""}${r.content ? `\n   ${r.content.replace(/\s+/g, " ").slice(0, 240)}` : ""}`,
        )
        .join("\n");
    },
  });
}
