/** The MCP SDK's client side, imported on first use: a daemon without MCP servers never loads it. */
export async function loadSdk() {
  const [client, stdio, streamable, sse, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/client/sse.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
    StreamableHTTPError: streamable.StreamableHTTPError,
    SSEClientTransport: sse.SSEClientTransport,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}

export type Sdk = Awaited<ReturnType<typeof loadSdk>>;
