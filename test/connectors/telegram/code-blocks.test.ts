/**
 * A reply's fenced code block on Telegram: shown as code (<pre>), also when the chat flow splits the reply
 * and each part is formatted again as it is sent or edited. A split-off part lost its fences, so its lines
 * came out as text ("# clean the build" as a bold heading), and a streamed 300-line block lost its last
 * lines at the final edit (the text, now longer, no longer fit the one message the edit writes).
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import type { Call, FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";

const OWNER = 42;

describe("a code block in a Telegram reply", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  const start = async (telegramExtra: Record<string, unknown> = {}) => {
    await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER], telegramExtra) },
    });
    await telegram.waitFor((c) => c.method === "getUpdates");
  };
  const toOwner = (c: Call) => Number(c.params.chat_id) === OWNER;

  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  it("is shown as code (<pre>), its lines as written", async () => {
    model.script({ text: "Run this:\n\n```\n# clean the build\nrm -rf build\n```" });
    await start();
    telegram.sendText(OWNER, "how do I clean?");
    const reply = await telegram.waitFor((c) => c.method === "sendMessage" && toOwner(c) && String(c.params.text).includes("rm -rf"));
    expect(reply.params.parse_mode).toBe("HTML");
    expect(reply.params.text).toBe("Run this:\n\n<pre># clean the build\nrm -rf build</pre>");
  });

  it("whose language is not a plain word (c#) or has more after it, is code, and the text after it is not", async () => {
    model.script({
      text: 'In C#:\n\n```c#\n// *note* the semicolon\nvar x = 1;\n```\n\nAnd:\n\n```python title="x.py"\nprint(1)\n```\n\nThat is all.',
    });
    await start();
    telegram.sendText(OWNER, "how in c#?");
    const reply = await telegram.waitFor((c) => c.method === "sendMessage" && toOwner(c) && String(c.params.text).includes("var x"));
    expect(reply.params.text).toBe(
      'In C#:\n\n<pre><code class="language-c#">// *note* the semicolon\nvar x = 1;</code></pre>\n\nAnd:\n\n<pre><code class="language-python">print(1)</code></pre>\n\nThat is all.',
    );
  });

  it("streamed, is code once finished", async () => {
    model.script({ text: "Run this:\n\n```sh\n# clean the build\nrm -rf build\n```" });
    await start({ stream_replies: true });
    telegram.sendText(OWNER, "how do I clean?");
    const final = await telegram.waitFor((c) => c.method === "editMessageText" && c.params.parse_mode === "HTML");
    expect(final.params.text).toContain('<pre><code class="language-sh"># clean the build\nrm -rf build</code></pre>');
  });

  it("streamed over several messages, keeps every line", async () => {
    const lines = Array.from({ length: 300 }, (_, i) => `# step ${String(i).padStart(3, "0")}`);
    model.script({ text: `\`\`\`\n${lines.join("\n")}\n\`\`\`` });
    await start({ stream_replies: true });
    telegram.sendText(OWNER, "the script please");
    const formatted = (c: Call) =>
      (c.method === "editMessageText" || (c.method === "sendMessage" && toOwner(c))) && c.params.parse_mode === "HTML";
    await telegram.waitFor((c) => formatted(c) && String(c.params.text).includes("# step 299</pre>"));
    const shown = new Map<number, string>();
    for (const c of telegram.calls) {
      if (c.method === "sendMessage" && toOwner(c)) shown.set(c.result.message_id, c.params.text);
      if (c.method === "editMessageText") shown.set(c.params.message_id, c.params.text);
    }
    const text = [...shown.values()].join("\n");
    expect(lines.filter((l) => !text.includes(l))).toEqual([]);
  });
});
