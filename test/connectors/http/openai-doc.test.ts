import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";
import { baseUrlOf, HTTP_TOKEN, httpEnv, httpSettings } from "../../helpers/http.js";

const DOC = join(import.meta.dirname, "../../../docs/openai.md");
const DOC_BASE = "http://127.0.0.1:8787";

/** Every `curl …` command in the doc's sh blocks, continuation lines joined. */
function curlCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  return blocks.flatMap((b) =>
    b
      .replace(/\\\n\s*/g, "")
      .split("\n")
      .filter((l) => l.startsWith("curl ")),
  );
}

/** A shell command line's words, as sh would split them: '…' literal, "…" and bare words with $VARS expanded. */
function shellWords(line: string, env: Record<string, string>): string[] {
  const expand = (s: string) => s.replace(/\$(\w+)/g, (_, name: string) => env[name] ?? "");
  const words: string[] = [];
  for (const m of line.matchAll(/(?:'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s'"]+))+/g)) {
    const word = m[0].replace(/'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s'"]+)/g, (_, single?: string, double?: string, bare?: string) =>
      single !== undefined ? single : expand(double ?? bare ?? ""),
    );
    words.push(word);
  }
  return words;
}

function runCurl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile("curl", args, { timeout: 20_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
}

describe("docs/openai.md", () => {
  let model: FakeModel;

  beforeEach(async () => {
    model = await useModel();
  });

  it("its curl examples work as written, run by the real curl against the door", async () => {
    const hermes = await useHermes(
      {
        ...baseSettings(model.url),
        connectors: { cron: { enabled: false }, http: httpSettings([], { openai: { enabled: true } }) },
      },
      { env: httpEnv },
    );
    const base = await baseUrlOf(hermes);
    const commands = curlCommands(readFileSync(DOC, "utf8"));
    expect(commands).toHaveLength(2);
    model.script({ text: "It is noon." }, { text: "Nothing is on today." });

    const [json, stream] = commands.map((c) => shellWords(c, { HERMES_HTTP_TOKEN: HTTP_TOKEN }).map((w) => w.replace(DOC_BASE, base)));
    expect(json?.[0]).toBe("curl");
    const answer = JSON.parse(await runCurl((json ?? []).slice(1))) as { object: string; choices: { message: { content: string } }[] };
    expect(answer.object).toBe("chat.completion");
    expect(answer.choices[0]?.message.content).toBe("It is noon.");
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/^What time is it\?/);

    const streamed = await runCurl((stream ?? []).slice(1));
    const data = streamed.split("\n").filter((l) => l.startsWith("data: "));
    expect(data.at(-1)).toBe("data: [DONE]");
    const text = data
      .slice(0, -1)
      .map((l) => (JSON.parse(l.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? "")
      .join("");
    expect(text).toBe("Nothing is on today.");
  });
});
