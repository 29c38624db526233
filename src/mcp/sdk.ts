/** The MCP SDK's client side, imported on first use: a daemon without MCP servers never loads it. */
export async function loadSdk() {
  const [client, stdio, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}

/**
 * The SDK's HTTP transports, imported for the first server with a `url`: they bring its OAuth client,
 * whose PKCE module reaches for WebCrypto as it loads, and so node:crypto, which stdio servers never need.
 */
export async function loadHttpTransports() {
  const [streamable, sse] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/client/sse.js"),
  ]);
  return {
    StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
    StreamableHTTPError: streamable.StreamableHTTPError,
    SSEClientTransport: sse.SSEClientTransport,
  };
}

export type Sdk = Awaited<ReturnType<typeof loadSdk>>;
