import { checkChats, checkCron, checkHttp, connectors } from "./connectors-schema.js";
import { checkHttpOpenAi } from "./http-openai.js";
import { element, section } from "./sections.js";
import { skillsSchema } from "./skills-schema.js";
import { DEFAULT_TOOLS, enabledEntry, MCP_SEPARATOR } from "./tool-names.js";
import { z } from "./zod.js";
import { cronProblem, systemZone, zoneSetting } from "./zones.js";

export { DEFAULT_TOOLS, MCP_SEPARATOR, TOOL_NAMES, type ToolName } from "./tool-names.js";

const positiveInt = () => z.int().min(1);

/** An http:// or https:// URL: an endpoint hermes speaks HTTP to (`localhost:11434` and `ftp://…` are refused here, not at run time). */
const httpUrl = () => z.url({ protocol: /^https?$/, message: "expected an http(s) URL" });

/** Settings every tool accepts under `tools.<name>`. */
const toolBase = () => ({
  max_result_chars: positiveInt().optional(),
  timeout_s: z.number().positive().optional(),
});
/** `tools.<name>`: the settings every tool takes, and `shape`, the settings of its own. */
const toolSettings = <T extends z.ZodRawShape>(name: string, shape: () => T = () => ({}) as T) =>
  section(`tools.${name}`, () => z.strictObject({ ...toolBase(), ...shape() }).prefault({} as never));

/** One model endpoint: the primary under `model`, and each of `model.fallbacks`. */
const endpointShape = () => ({
  provider: z.enum(["ollama", "openai"]).default("ollama"),
  base_url: httpUrl().default("http://127.0.0.1:11434"),
  name: z.string().min(1).default("hermes3:8b"),
  api_key: z.string().default(""),
  context_tokens: z.int().min(512).default(16384),
  max_output_tokens: z.int().min(16).default(1024),
  temperature: z.number().min(0).max(2).default(0.2),
  timeout_s: z.number().positive().default(300),
  tool_call_format: z.enum(["auto", "native", "hermes"]).default("auto"),
  keep_alive: z.string().default("30m"),
  concurrency: positiveInt().default(1),
  retries: z.int().min(0).max(10).default(4),
  retry_base_ms: z.int().min(1).default(500),
  stream: z.boolean().default(true),
  /** Seconds to wait for the first byte of an answer before moving to the next endpoint. */
  first_byte_timeout_s: z.number().positive().default(60),
  /** Tokens (prompt + output) this endpoint may use per day; 0 = no limit. */
  daily_tokens: z.int().min(0).default(0),
});

/** What an endpoint's window must leave the prompt beside the answer's share. */
const MIN_PROMPT_ROOM = 512;
const leavesPromptRoom = (e: { context_tokens: number; max_output_tokens: number }, ctx: z.RefinementCtx) => {
  if (e.context_tokens - e.max_output_tokens >= MIN_PROMPT_ROOM) return;
  ctx.addIssue({
    code: "custom",
    path: ["max_output_tokens"],
    message: `leaves the prompt ${e.context_tokens - e.max_output_tokens} of context_tokens' ${e.context_tokens}; keep it at least ${MIN_PROMPT_ROOM} under context_tokens`,
  });
};

const model = () =>
  z
    .strictObject({
      ...endpointShape(),
      /** How often a failed-over-from primary is probed, to take it back once healthy. */
      retry_primary_after_s: z.number().positive().default(300),
      fallbacks: z.array(element(() => z.strictObject(endpointShape()).superRefine(leavesPromptRoom))).default([]),
      /** auto: asked of Ollama's /api/show capabilities (an openai endpoint is assumed to see); true/false override. */
      vision: z.union([z.literal("auto"), z.boolean()], { error: "expected auto, true or false" }).default("auto"),
      vision_model: z.string().default(""),
      max_image_px: z.int().min(64).default(1568),
    })
    .superRefine(leavesPromptRoom)
    .prefault({});

/** Speech-to-text: any OpenAI-compatible POST /audio/transcriptions. Absent: voice notes are answered with how to set it up. */
const speech = () =>
  z
    .strictObject({
      base_url: httpUrl(),
      model: z.string().min(1).default("Systran/faster-whisper-small"),
      api_key: z.string().default(""),
      language: z.string().default(""),
      max_seconds: z.number().positive().default(600),
      timeout_s: z.number().positive().default(120),
    })
    .optional();

const agent = () =>
  z
    .strictObject({
      max_steps: z.int().min(1).max(100).default(8),
      repeat_limit: positiveInt().default(2),
      failure_limit: positiveInt().default(3),
      confirm: z.array(enabledEntry()).default(["shell", "write_file", "send_message"]),
      confirm_timeout_s: z.number().positive().default(600),
      shutdown_grace_s: z.number().min(0).default(10),
      system_prompt: z.string().optional(),
      /** Prompt + output tokens a run's model calls may use; 0 = no limit. */
      max_run_tokens: z.int().min(0).default(0),
    })
    .prefault({});

const tools = () =>
  z
    .strictObject({
      enabled: z.array(enabledEntry()).default(DEFAULT_TOOLS),
      clock: toolSettings("clock"),
      notes: toolSettings("notes"),
      memory: toolSettings("memory", () => ({ max_facts: positiveInt().default(50) })),
      remind: toolSettings("remind"),
      files: toolSettings("files", () => ({ root: z.string().default("./data/files"), max_bytes: positiveInt().default(1_000_000) })),
      shell: toolSettings("shell", () => ({ cwd: z.string().optional(), max_output_chars: positiveInt().default(4000) })),
      http_get: toolSettings("http_get", () => ({
        allow: z.array(z.string()).default([]),
        max_bytes: positiveInt().default(2_000_000),
      })),
      send_message: toolSettings("send_message"),
      weather: toolSettings("weather", () => ({
        base_url: z.url().default("https://api.open-meteo.com"),
        geocoding_url: z.url().default("https://geocoding-api.open-meteo.com"),
        location: z.string().optional(),
      })),
      calendar: toolSettings("calendar", () => ({ sources: z.array(z.string()).default([]) })),
      feeds: toolSettings("feeds", () => ({ urls: z.array(z.string()).default([]) })),
      web_search: toolSettings("web_search", () => ({ url: z.url().optional() })),
    })
    .prefault({});

const context = () =>
  z
    .strictObject({
      /** Summarise turns that no longer fit the window instead of only dropping them. */
      summaries: z.boolean().default(true),
      /** After a failed compaction of a session, the next try waits this many user turns. */
      compact_every: positiveInt().default(20),
      compact_timeout_s: z.number().positive().default(120),
    })
    .prefault({});

const backup = () =>
  z.strictObject({
    schedule: z.string().min(1).optional(),
    keep: positiveInt().default(7),
    dir: z.string().default("./data/backups"),
  });

const mcpServer = () =>
  z
    .strictObject({
      command: z.string().min(1).optional(),
      args: z.array(z.string()).default([]),
      env: z.record(z.string(), z.string()).default({}),
      cwd: z.string().optional(),
      url: httpUrl().optional(),
      headers: z.record(z.string(), z.string()).default({}),
      timeout_s: z.number().positive().default(30),
      confirm: z.enum(["auto", "always", "never"]).default("auto"),
      max_result_chars: positiveInt().optional(),
    })
    .refine((s) => (s.command === undefined) !== (s.url === undefined), "expected either command (a stdio server) or url (a remote one)");

const mcp = () =>
  z
    .strictObject({
      servers: z
        .record(
          z.string().regex(/^[a-z0-9-]+(_[a-z0-9-]+)*$/, "expected a server name of a-z, 0-9, '_' or '-' (no '__')"),
          element(mcpServer),
        )
        .default({}),
    })
    .prefault({});

const storage = () =>
  z
    .strictObject({
      path: z.string().default("./data/hermes.db"),
      busy_timeout_ms: z.int().min(0).default(5000),
      backup: backup().optional(),
    })
    .prefault({});

const log = () =>
  z
    .strictObject({
      level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
      /** auto: pretty on a terminal, `<N>`-prefixed lines to the journal, JSON elsewhere. */
      format: z.enum(["auto", "json", "pretty", "journal"]).default("auto"),
    })
    .prefault({});

export const configSchema = () =>
  z
    .strictObject({
      $schema: z.string().optional(),
      timezone: zoneSetting().default(systemZone),
      model: section("model", model),
      speech: speech(),
      agent: section("agent", agent),
      tools: section("tools", tools),
      context: section("context", context),
      storage: section("storage", storage),
      connectors: section("connectors", connectors),
      mcp: section("mcp", mcp),
      skills: section("skills", skillsSchema),
      log: section("log", log),
    })
    .superRefine((cfg, ctx) => {
      checkChats(cfg.connectors, ctx);
      checkHttp(cfg.connectors, ctx);
      checkHttpOpenAi(cfg.connectors, ctx);
      const backupSchedule = cfg.storage.backup?.schedule;
      const backupProblem = backupSchedule ? cronProblem(backupSchedule) : undefined;
      if (backupProblem) ctx.addIssue({ code: "custom", path: ["storage", "backup", "schedule"], message: backupProblem });
      const checkServers = (entries: string[], path: (string | number)[]): void => {
        entries.forEach((entry, i) => {
          const server = entry.split(MCP_SEPARATOR)[0] ?? "";
          if (entry.includes(MCP_SEPARATOR) && !(server in cfg.mcp.servers)) {
            ctx.addIssue({
              code: "custom",
              path: [...path, i],
              message: `names MCP server '${server}', which mcp.servers does not configure`,
            });
          }
        });
      };
      checkServers(cfg.tools.enabled, ["tools", "enabled"]);
      checkServers(cfg.agent.confirm, ["agent", "confirm"]);
      cfg.connectors.cron.jobs.forEach((job, i) => {
        checkServers(job.tools ?? [], ["connectors", "cron", "jobs", i, "tools"]);
      });
      cfg.connectors.http.hooks.forEach((hook, i) => {
        checkServers(hook.tools ?? [], ["connectors", "http", "hooks", i, "tools"]);
      });
      checkCron(cfg.connectors, ctx);
    });

export type Config = z.output<ReturnType<typeof configSchema>>;
export type HttpConfig = Config["connectors"]["http"];
export type HttpHook = HttpConfig["hooks"][number];
export type ModelConfig = Config["model"];
/** The settings of one endpoint (the primary's, or a fallback's). */
export type EndpointConfig = Omit<ModelConfig, "fallbacks" | "retry_primary_after_s" | "vision" | "vision_model" | "max_image_px">;
export type AgentConfig = Config["agent"];
export type ToolsConfig = Config["tools"];
export type SpeechConfig = NonNullable<Config["speech"]>;
export type McpServerConfig = Config["mcp"]["servers"][string];
