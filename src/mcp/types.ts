/**
 * The MCP contracts. A session keeps one configured server connected (or says why it is not); the hub
 * turns the sessions' tools into ordinary hermes tools, so every MCP call passes the gate like any other.
 * Rules:
 * - Nothing a server sends or fails to send throws out of a session except as the error of one call.
 * - `call` rejects with "server <name> is not connected (<why>)" while the server is down; its tools stay.
 * - A call ends within the server's `timeout_s`; a timeout or an abort sends `notifications/cancelled`.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** One tool as a server listed it, trimmed to what hermes uses. */
export interface McpToolInfo {
  /** The server's own name for it. */
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The server's `annotations.readOnlyHint`. */
  readOnlyHint: boolean;
}

export type SessionPhase = "connecting" | "connected" | "down" | "closed";

export interface SessionStatus {
  phase: SessionPhase;
  transport: "stdio" | "streamable-http" | "sse";
  /** Why the server is not connected, or the last error it caused. */
  lastError?: string;
  /** Tools the server lists (the last list, while it is down). */
  toolCount: number;
}

export interface McpSession {
  readonly name: string;
  /** Starts connecting in the background; retries with backoff until `close`. */
  start(): void;
  /** Resolves once the first connection attempt has succeeded or failed. Never rejects. */
  firstAttempt(): Promise<void>;
  tools(): McpToolInfo[];
  status(): SessionStatus;
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** What `hermes tools` and `hermes status` say of one MCP server. */
export interface McpServerReport {
  name: string;
  transport: SessionStatus["transport"];
  connected: boolean;
  state: SessionPhase;
  tools: number;
  enabled: number;
  prompt_tokens: number;
  last_error: string | null;
  fix: string | null;
  /** Entries of `tools.enabled` for this server that name none of its tools (a typo, a renamed tool). */
  unmatched: string[];
}
