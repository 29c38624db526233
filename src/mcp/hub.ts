import { type Config, MCP_SEPARATOR, type McpServerConfig } from "../config/schema.js";
import type { Logger } from "../log.js";
import { toolTokens } from "../model/tokens.js";
import { McpToolListStore } from "../store/mcp-tools.js";
import type { Store } from "../store/store.js";
import { toolSpec } from "../tools/define.js";
import type { AnyTool } from "../tools/types.js";
import { maskArgs, maskUrl, maskUrlsInText } from "../url-secrets.js";
import { isEnabled, nameTools } from "./names.js";
import { notConnectedText } from "./not-connected.js";
import { loadSdk, type Sdk } from "./sdk.js";
import { createSession } from "./session.js";
import { createMcpTool } from "./tools.js";
import type { McpServerReport, McpSession, McpToolInfo } from "./types.js";

export interface McpHubDeps {
  store: Store;
  log: Logger;
  /** `file:line:col` of a config key, for problems found once a server answers. */
  locate?: (path: (string | number)[]) => string;
  retryBaseMs?: number;
  /** The config's secret values (`${VAR}`s): masked where a server's command line is shown. */
  secrets?: readonly string[];
}

export interface McpHub {
  /** The enabled tools of every server, as hermes tools (also those of servers that are down). */
  tools(): AnyTool[];
  reports(): McpServerReport[];
  /** Why the enabled tool `name` is missing when its server is not connected (see not-connected.ts), else undefined. */
  whyMissing(name: string, enabled: readonly string[]): string | undefined;
  /** Resolves when every server has made its first attempt, or after `maxMs`. */
  settled(maxMs: number): Promise<void>;
  /** Called whenever a server's tool list changes. */
  onChange(listener: () => void): void;
  /**
   * The session of server `name`, for a new hub (a config reload) whose settings for it are `cfg`, the same as
   * this hub's: it goes on, with its process, its connection and the calls it is running, and this hub's
   * close leaves it. Undefined when the settings differ (the new hub starts its own).
   */
  handOver(name: string, cfg: McpServerConfig): KeptSession | undefined;
  close(): Promise<void>;
}

/** A session handed from one hub to the next, and where it sends its tool lists. */
export interface KeptSession {
  session: McpSession;
  route: Route;
}

/** Where a session's tool lists go: the hub that has it now. */
interface Route {
  onTools(tools: McpToolInfo[]): void;
}

interface Entry {
  session: McpSession;
  route: Route;
  cfg: McpServerConfig;
  tools: AnyTool[];
  /** What the enabled tools' signatures add to every request, counted when the list changes. */
  promptTokens: number;
  collisions: string[];
  unmatched: string[];
}

/**
 * Connects the configured MCP servers in the background and keeps their enabled tools current. A hub made by a
 * reload takes over from `previous` every server whose settings did not change.
 */
export function createMcpHub(config: Config, deps: McpHubDeps, previous?: McpHub): McpHub {
  const lists = new McpToolListStore(deps.store.db);
  let sdk: Promise<Sdk> | undefined;
  const listeners: (() => void)[] = [];
  const entries = new Map<string, Entry>();

  const build = (name: string, infos: McpToolInfo[]) => {
    const entry = entries.get(name);
    if (!entry) return;
    const { named, collisions } = nameTools(name, infos);
    if (collisions.length) {
      const at = deps.locate?.(["mcp", "servers", name]) ?? `mcp.servers.${name}`;
      deps.log.error({ mcp: name, tools: collisions }, `${at}: tools of server ${name} share a name after sanitising; refused`);
    }
    entry.collisions = collisions;
    entry.tools = [...named]
      .filter(([modelName]) => isEnabled(modelName, config.tools.enabled))
      .map(([modelName, info]) => createMcpTool(modelName, info, entry.session, entry.cfg));
    entry.promptTokens = toolTokens(entry.tools.map(toolSpec));
    // Known only once the server has listed its tools (now or in an earlier run).
    const unmatched = infos.length ? unmatchedEntries(name, [...named.keys()], config.tools.enabled) : [];
    if (unmatched.join() !== entry.unmatched.join() && unmatched.length) {
      const at = deps.locate?.(["tools", "enabled"]) ?? "tools.enabled";
      deps.log.warn(
        { mcp: name, entries: unmatched },
        `${at}: entries that name no tool of server ${name}; \`hermes tools\` lists what it offers`,
      );
    }
    entry.unmatched = unmatched;
  };

  for (const [name, cfg] of Object.entries(config.mcp.servers)) {
    // The latest list the server gave (kept at every change), or the one of the last run.
    const cached = lists.load(name) as McpToolInfo[];
    const kept = previous?.handOver(name, cfg);
    const route: Route = kept?.route ?? { onTools: () => {} };
    const session =
      kept?.session ??
      createSession(name, cfg, {
        sdk: () => (sdk ??= loadSdk()),
        log: deps.log,
        cached,
        retryBaseMs: deps.retryBaseMs,
        onTools: (tools) => route.onTools(tools),
      });
    route.onTools = (tools) => {
      lists.save(name, tools);
      build(name, tools);
      for (const listener of listeners) listener();
    };
    entries.set(name, { session, route, cfg, tools: [], promptTokens: 0, collisions: [], unmatched: [] });
    build(name, cached);
    if (!kept) session.start();
  }

  const reports = () => [...entries.values()].map((e) => reportOf(e, deps.secrets));
  return {
    tools: () => [...entries.values()].flatMap((e) => e.tools),
    reports,
    whyMissing: (name, enabled) => notConnectedText(name, reports(), enabled),
    settled: async (maxMs) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxMs);
        timer.unref();
      });
      await Promise.race([Promise.all([...entries.values()].map((e) => e.session.firstAttempt())), timeout]);
      clearTimeout(timer);
    },
    onChange: (listener) => listeners.push(listener),
    handOver: (name, cfg) => {
      const entry = entries.get(name);
      if (!entry || JSON.stringify(entry.cfg) !== JSON.stringify(cfg)) return undefined;
      entries.delete(name);
      entry.route.onTools = () => {};
      return { session: entry.session, route: entry.route };
    },
    close: async () => {
      await Promise.allSettled([...entries.values()].map((e) => e.session.close()));
    },
  };
}

function reportOf(entry: Entry, secrets: readonly string[] = []): McpServerReport {
  const status = entry.session.status();
  const collision = entry.collisions.length ? `tools share a name after sanitising: ${entry.collisions.join(", ")}` : undefined;
  const lastError = status.lastError ?? collision ?? null;
  return {
    name: entry.session.name,
    transport: status.transport,
    connected: status.phase === "connected",
    state: status.phase,
    tools: status.toolCount,
    enabled: entry.tools.length,
    prompt_tokens: entry.promptTokens,
    // Reports reach `hermes status`, `hermes tools`, doctor and the model (a missing tool says why): a key
    // inside a server's URL is masked here, once for all of them.
    last_error: lastError && maskUrlsInText(lastError),
    fix:
      status.phase === "connected"
        ? collision
          ? "rename the tools on the server, or enable only one of them"
          : null
        : fixFor(entry.cfg, lastError ?? "", secrets),
    unmatched: entry.unmatched,
  };
}

/** The entries of `enabled` for server `name` (`name__…`) that match none of its tools' model-facing names. */
function unmatchedEntries(name: string, toolNames: string[], enabled: readonly string[]): string[] {
  const prefix = `${name}${MCP_SEPARATOR}`;
  return enabled.filter((e) => e.startsWith(prefix) && !toolNames.some((t) => isEnabled(t, [e])));
}

function fixFor(cfg: McpServerConfig, error: string, secrets: readonly string[] = []): string {
  if (/401|403|unauthori[sz]ed|forbidden/i.test(error))
    return "check the token in the server's headers (the environment variable it comes from)";
  if (cfg.command) {
    if (/ENOENT|not found/i.test(error)) return `install ${cfg.command} or give its full path in command`;
    return `run \`${[cfg.command, ...maskArgs(cfg.args, secrets)].join(" ")}\` by hand to see why it exits; its stderr is in the log`;
  }
  return `check that ${maskUrl(cfg.url ?? "")} is reachable from this host and speaks MCP`;
}
