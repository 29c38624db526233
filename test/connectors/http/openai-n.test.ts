/**
 * A request for n > 1 choices got one: a client reading choices[1] found nothing. One run answers one choice:
 * n other than 1 is refused with a 400 in OpenAI's shape, before any model call.
 */
import OpenAI from "openai";
import { expect, it } from "vitest";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";
import { baseUrlOf, HTTP_TOKEN, httpEnv, httpSettings } from "../../helpers/http.js";

// A client that asks for n choices reads choices[0..n-1]. hermes answers one run, so n > 1 must be refused
// in OpenAI's shape (as llama.cpp's server does), not answered with fewer choices than asked for.
it("refuses n > 1 with a 400 instead of answering one choice", async () => {
  const model = await useModel();
  model.respond(() => ({ text: "one answer" }));
  const hermes = await useHermes(
    { ...baseSettings(model.url), connectors: { cron: { enabled: false }, http: httpSettings([], { openai: { enabled: true } }) } },
    { env: httpEnv },
  );
  const client = new OpenAI({ baseURL: `${await baseUrlOf(hermes)}/v1`, apiKey: HTTP_TOKEN, maxRetries: 0 });
  const answer = await client.chat.completions
    .create({ model: "hermes", n: 3, messages: [{ role: "user", content: "three ideas please" }] })
    .catch((e: unknown) => e);
  expect(answer).toBeInstanceOf(OpenAI.BadRequestError);
  expect(model.requests).toHaveLength(0);
  // n: 1 (or absent) is fine.
  const one = await client.chat.completions.create({ model: "hermes", n: 1, messages: [{ role: "user", content: "hi" }] });
  expect(one.choices).toHaveLength(1);
});
