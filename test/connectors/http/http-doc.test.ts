/** docs/http.md as its reader follows it: the settings it shows do what its text says. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";
import { baseUrlOf, bearer, HTTP_TOKEN, httpEnv, httpSettings } from "../../helpers/http.js";

const DOC = readFileSync(join(import.meta.dirname, "../../../docs/http.md"), "utf8");

/** `connectors.http` as the doc's YAML blocks set it, each block's keys over the ones before. */
function documentedHttp(): Record<string, unknown> {
  const blocks = [...DOC.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parse(m[1] ?? "") as { connectors?: { http?: object } });
  return Object.assign({}, ...blocks.map((b) => b?.connectors?.http ?? {}));
}

describe("docs/http.md", () => {
  it("counts failed logins per client behind a reverse proxy on the same machine, with the settings it shows", async () => {
    expect(DOC).toMatch(/behind a\s+reverse proxy .*, the address it appends to `X-Forwarded-For`/);
    const model = await useModel();
    // The doc's settings on a free port, without its hooks (they deliver to a chat this test has not).
    const http = { ...documentedHttp(), ...httpSettings() };
    const hermes = await useHermes({ ...baseSettings(model.url), connectors: { cron: { enabled: false }, http } }, { env: httpEnv });
    const base = await baseUrlOf(hermes);
    // The test is the nginx of the doc: on 127.0.0.1, appending the address it saw to X-Forwarded-For.
    const status = (token: string, client: string) =>
      fetch(`${base}/v1/status`, { headers: { ...bearer(token), "x-forwarded-for": client } }).then((r) => r.status);
    for (let i = 0; i < 30; i++) expect(await status("guess", "203.0.113.7")).toBe(401);
    expect(await status("guess", "203.0.113.7")).toBe(429);
    expect(await status("guess", "198.51.100.2")).toBe(401);
    expect(await status(HTTP_TOKEN, "203.0.113.7")).toBe(200);
  });
});
