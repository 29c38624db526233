/**
 * The model boundary. A ModelClient turns a conversation into one assistant turn.
 * Rule: `chat` never throws; every failure comes back as `{ ok: false, error }` with a reason a user can act on.
 */
import type { ModelError } from "../errors.js";

/** A tool call as the agent understands it, whatever wire format carried it. */
export interface ToolCall {
  id: string;
  name: string;
  /** Parsed arguments; `undefined` when they could not be parsed (see `parseError`). */
  args: unknown;
  /** Set when the model sent arguments that are not valid JSON; the call is answered with this error. */
  parseError?: string;
}

export type ChatMessage =
  | { role: "system"; content: string }
  | {
      role: "user";
      content: string;
      /**
       * Images for the model, base64 (no `data:` prefix): set only on the request of the turn that
       * brought them. Clients send them; a client without vision never gets them.
       */
      images?: string[];
      /** The images this message carried, as files under the data directory's media folder (what history keeps). */
      imageFiles?: string[];
    }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; content: string; toolCallId: string; toolName: string };

/** What the model is told about a tool: name, description and JSON Schema of the arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
}

export interface ModelUsage {
  promptTokens?: number;
  outputTokens?: number;
}

export type ModelResult =
  | { ok: true; text: string; toolCalls: ToolCall[]; usage: ModelUsage; finishReason: string }
  | { ok: false; error: ModelError };

export interface ChatOptions {
  signal?: AbortSignal;
  /** Called with each piece of reply text as it streams in. Must not throw. */
  onText?: (delta: string) => void;
  /**
   * Called the moment the model has finished answering, before the answer is checked and handed up:
   * the model is free for the next request from then on. Must not throw.
   */
  onAnswered?: () => void;
}

export interface ProbeResult {
  reachable: boolean;
  /** `undefined` when the endpoint cannot tell (e.g. a /models listing is not offered). */
  modelPresent?: boolean;
  detail: string;
}

export type PreparedChat = (options?: ChatOptions) => Promise<ModelResult>;

export interface ModelClient {
  readonly provider: "ollama" | "openai";
  readonly baseUrl: string;
  readonly modelName: string;
  chat(request: ModelRequest, options?: ChatOptions): Promise<ModelResult>;
  /**
   * The same call in two halves: the request is put in its wire form now, sent when the returned
   * function is called. The agent prepares before it waits for a model slot, so a slot's time goes
   * to the model rather than to serialising the next prompt.
   */
  prepare(request: ModelRequest): PreparedChat;
  /** Checks reachability and whether the configured model exists. Never throws. */
  probe(signal?: AbortSignal): Promise<ProbeResult>;
}
