/**
 * The model boundary. A ModelClient turns a conversation into one assistant turn.
 * Rule: `chat` never throws; every failure comes back as `{ ok: false, error }` with a reason a user can act on.
 */
import type { ModelError, ModelErrorKind } from "../errors.js";

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
  /** The estimated prompt tokens of this request (stored when the endpoint reports none). */
  estimatedTokens?: number;
  /**
   * At most this many tokens of answer, when fewer than the endpoint's `max_output_tokens`: a summary asked
   * for at the end of the chat's own prompt, whose room is what the summary may take, not a whole answer's.
   */
  maxOutputTokens?: number;
  /**
   * Builds the same request for another window: used when a call moves to an endpoint with another
   * context window, or when an endpoint says the prompt did not fit.
   */
  rebuild?: (window: PromptWindow) => ModelRequest;
}

/** What a prompt must fit: the endpoint's usable context and the room kept for the answer. */
export interface PromptWindow {
  model: string;
  contextTokens: number;
  outputTokens: number;
}

/** Token counts as the endpoint reported them; `undefined` where it reported nothing. */
export interface ModelUsage {
  promptTokens?: number;
  outputTokens?: number;
  /** Prompt tokens served from the server's prompt cache, where reported. */
  cachedTokens?: number;
  /** Milliseconds from sending the request to the first byte of the answer. */
  firstByteMs?: number;
}

/** One model call as the usage ledger records it: which endpoint, what it reported, how long it took. */
export interface ModelCall {
  endpoint: string;
  model: string;
  usage: ModelUsage;
  /** The request's estimate, for when the endpoint reports no prompt tokens. */
  estimatedPromptTokens?: number;
  /**
   * Characters of the answer (text and calls) as Latin text of the same estimate, for an output estimate at
   * 3.6 a token; 0 when output tokens were reported.
   */
  outputChars: number;
  totalMs: number;
  outcome: "ok" | ModelErrorKind;
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
  /** Retry a retryable failure at most this often (fewer than configured; 0 = one try only). */
  maxRetries?: number;
  /** Called once per endpoint attempt, whatever its outcome, for the usage ledger. Must not throw. */
  onCall?: (call: ModelCall) => void;
  /**
   * Set by a chain that has another endpoint to try: a refused connection or a failed DNS lookup is
   * not retried here, the call moves on at once.
   */
  moveOnUnreachable?: boolean;
  /** A one-line note for the owner (an endpoint failed over, a budget was reached). Must not throw. */
  onNotice?: (text: string) => void;
}

export interface ProbeResult {
  reachable: boolean;
  /** `undefined` when the endpoint cannot tell (e.g. a /models listing is not offered). */
  modelPresent?: boolean;
  detail: string;
  /** What fixes an unreachable endpoint, when it is not "start it" (a certificate, a name). */
  fix?: string;
  /**
   * It answered, with a server error (5xx) or "too many requests" (429): up, but not serving. A proxy in
   * front of a model server that is down answers 502 to every path; failover does not go back to it.
   */
  serverError?: boolean;
}

export type PreparedChat = (options?: ChatOptions) => Promise<ModelResult>;

export interface ModelClient {
  readonly provider: "ollama" | "openai";
  readonly baseUrl: string;
  readonly modelName: string;
  /** The window prompts for this client must fit (for a chain: the endpoint that would serve now). */
  readonly window?: PromptWindow;
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

/** Which endpoint serves now, and why it is not the primary when it is not. */
export interface ServingStatus {
  endpoint: string;
  model: string;
  primary: boolean;
  reason: string;
  /** The context window prompts are budgeted to (the smaller of context_tokens and the server's). */
  context_tokens?: number;
}

/**
 * The primary and its fallbacks as one ModelClient: the loop asks for "a model" and never learns which
 * endpoint answered. A call moves on only on failures another endpoint can fix; the choice is sticky
 * until the primary's background probe finds it healthy again.
 */
export interface ModelChain extends ModelClient {
  serving(): ServingStatus;
  /** Stops the background probe of the primary. */
  stop(): void;
}

/** Where an endpoint says its real context window comes from, and how large it is. */
export interface ServerWindow {
  contextTokens: number;
  source: string;
}
