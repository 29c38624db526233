/** The live checks of `hermes setup`: each answers in words and never throws. */

import { maskUrl, maskUrlsInText } from "../url-secrets.js";

export interface ModelInfo {
  name: string;
  /** Whether it can call tools and see images; undefined where the server does not say (OpenAI's /models). */
  tools?: boolean;
  vision?: boolean;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

const TIMEOUT_MS = 10_000;

async function getJson(url: string, init: RequestInit = {}): Promise<unknown> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  const body = await res.text();
  if (!res.ok) throw new Error(`${res.status} ${res.statusText}${body ? `: ${body.slice(0, 200)}` : ""}`);
  return JSON.parse(body);
}

/** Why a request failed, in words; a key or password in a URL it names is masked. */
function reason(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  return maskUrlsInText(e.cause?.code ?? e.cause?.message ?? e.message);
}

/** Ollama's pulled models (`/api/tags`) and what each can do (`/api/show` capabilities). */
export async function listModels(baseUrl: string): Promise<Checked<ModelInfo[]>> {
  const base = baseUrl.replace(/\/+$/, "");
  const shown = maskUrl(base);
  let tags: { models?: { name?: string }[] };
  try {
    tags = (await getJson(`${base}/api/tags`)) as typeof tags;
  } catch (err) {
    return { ok: false, problem: `cannot reach Ollama at ${shown} (${reason(err)}); is it running? (systemctl status ollama)` };
  }
  const names = (tags.models ?? []).flatMap((m) => (typeof m.name === "string" ? [m.name] : []));
  const models = await Promise.all(
    names.map(async (name) => {
      try {
        const show = (await getJson(`${base}/api/show`, { method: "POST", body: JSON.stringify({ model: name }) })) as {
          capabilities?: string[];
        };
        const caps = show.capabilities ?? [];
        return { name, tools: caps.includes("tools"), vision: caps.includes("vision") };
      } catch {
        return { name, tools: false, vision: false };
      }
    }),
  );
  return { ok: true, value: models };
}

/** An OpenAI-compatible server's models (`GET <base_url>/models`, with the API key when there is one). */
export async function listOpenAiModels(baseUrl: string, apiKey: string): Promise<Checked<ModelInfo[]>> {
  const base = baseUrl.replace(/\/+$/, "");
  const shown = maskUrl(base);
  try {
    const list = (await getJson(`${base}/models`, apiKey ? { headers: { authorization: `Bearer ${apiKey}` } } : {})) as {
      data?: { id?: unknown }[];
    };
    return { ok: true, value: (list.data ?? []).flatMap((m) => (typeof m.id === "string" ? [{ name: m.id }] : [])) };
  } catch (err) {
    const why = reason(err);
    const problem = /^401/.test(why)
      ? `the server at ${shown} refused the API key (401): set model.api_key (say \${OPENAI_API_KEY} in hermes.env)`
      : `cannot list the models at ${shown}/models (${why}); is the server running, and does base_url end in /v1?`;
    return { ok: false, problem };
  }
}

/** Telegram's getMe for a token: the bot's @name. */
export async function telegramBot(apiRoot: string, token: string): Promise<Checked<{ username: string; name: string }>> {
  if (!/^\d+:[\w-]{20,}$/.test(token))
    return { ok: false, problem: "that does not look like a bot token (digits:letters, from @BotFather)" };
  try {
    const me = (await getJson(`${apiRoot.replace(/\/+$/, "")}/bot${token}/getMe`)) as {
      result?: { username?: string; first_name?: string };
    };
    return { ok: true, value: { username: me.result?.username ?? "?", name: me.result?.first_name ?? "" } };
  } catch (err) {
    const why = reason(err);
    return {
      ok: false,
      problem: /^401/.test(why) ? "Telegram rejected the token (401): copy it again from @BotFather" : `getMe failed: ${why}`,
    };
  }
}

/** Discord's `GET /users/@me` for a bot token: the bot's name. */
export async function discordBot(apiRoot: string, token: string): Promise<Checked<{ username: string }>> {
  if (!/^[\w-]{16,}\.[\w-]{4,}\.[\w-]{16,}$/.test(token))
    return { ok: false, problem: "that does not look like a bot token (three parts with dots, from the Developer Portal's Bot page)" };
  try {
    const me = (await getJson(`${apiRoot.replace(/\/+$/, "")}/v10/users/@me`, { headers: { authorization: `Bot ${token}` } })) as {
      username?: string;
    };
    return { ok: true, value: { username: me.username ?? "?" } };
  } catch (err) {
    const why = reason(err);
    return {
      ok: false,
      problem: /^401/.test(why)
        ? "Discord rejected the token (401): reset it on the Bot page and copy it again"
        : `the check failed: ${why}`,
    };
  }
}
