/**
 * A stream shows the model's words before a tool call. The line that follows them (a tool's outcome for
 * `hermes-tools`, an approval asked and decided) was glued to those words: "Let me check.🔧 clock: done".
 * Each is its own paragraph, as the words of each step are.
 */
import OpenAI from "openai";
import { expect, it } from "vitest";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";
import { approveFirstPending, baseUrlOf, HTTP_TOKEN, httpEnv, httpSettings } from "../../helpers/http.js";

it("streams the words said before a tool call apart from the tool's line and the approval's lines", async () => {
  const model = await useModel();
  const hermes = await useHermes(
    { ...baseSettings(model.url), connectors: { cron: { enabled: false }, http: httpSettings([], { openai: { enabled: true } }) } },
    { env: httpEnv },
  );
  const base = await baseUrlOf(hermes);
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: HTTP_TOKEN, maxRetries: 0 });
  const streamed = async (stream: AsyncIterable<OpenAI.ChatCompletionChunk>) => {
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    return text;
  };

  model.script({ text: "Let me check.", toolCalls: [{ name: "clock", arguments: {} }] }, { text: "Noon." });
  const tools = await client.chat.completions.create({
    model: "hermes-tools",
    stream: true,
    messages: [{ role: "user", content: "time?" }],
  });
  expect(await streamed(tools)).toBe("Let me check.\n\n🔧 clock: done\n\nNoon.");

  model.script(
    { text: "Let me write it.", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "x" } }] },
    { text: "Done." },
  );
  const gated = streamed(
    await client.chat.completions.create({ model: "hermes", stream: true, messages: [{ role: "user", content: "write it" }] }),
  );
  await hermes.waitForLog((l) => l.msg === "run waiting for approval");
  expect(await approveFirstPending(base)).toBe(200);
  expect(await gated).toBe(
    "Let me write it.\n\n⏸ write_file waits for approval on the dashboard\n✅ write_file was approved (by http)\n\nDone.",
  );
});
