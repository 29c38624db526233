import { postJson, readText } from "./http.js";

/** The parts of Ollama's `/api/show` answer hermes reads. */
export interface OllamaShow {
  capabilities?: string[];
  projector_info?: unknown;
  details?: { families?: string[] };
  model_info?: Record<string, unknown>;
}

/**
 * Answers per endpoint and model: what a pulled model can do and how long its context is do not change
 * while it stays pulled, so the start-up read of its window and the first photo's vision check share one
 * request. A failed ask is not kept (the model may be pulled later).
 */
const answers = new Map<string, Promise<OllamaShow | undefined>>();

/** Ollama's `/api/show` for `name`, or undefined when the server cannot be asked or lacks the model. Never throws. */
export function ollamaShow(baseUrl: string, name: string, signal: AbortSignal): Promise<OllamaShow | undefined> {
  const key = `${baseUrl} ${name}`;
  const known = answers.get(key);
  if (known) return known;
  const asked = ask(baseUrl, name, signal).then((answer) => {
    if (!answer) answers.delete(key);
    return answer;
  });
  answers.set(key, asked);
  return asked;
}

async function ask(baseUrl: string, name: string, signal: AbortSignal): Promise<OllamaShow | undefined> {
  try {
    const res = await postJson(`${baseUrl}/api/show`, JSON.stringify({ model: name }), signal);
    const text = await readText(res);
    if ((res.statusCode ?? 0) !== 200) return undefined;
    return JSON.parse(text) as OllamaShow;
  } catch {
    return undefined;
  }
}
