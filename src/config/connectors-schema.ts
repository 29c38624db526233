// `connectors:` of hermes.yaml: the built-in chats, cron, the HTTP door, email and plugins, and the checks
// across them that the config's schema runs once the whole file is read.
import { emailSchema } from "./email-schema.js";
import { httpOpenAi } from "./http-openai.js";
import { deliverProblem, deliveryTarget, pluginEntries } from "./plugins-schema.js";
import { element, section } from "./sections.js";
import { enabledEntry } from "./tool-names.js";
import { trustedProxies } from "./trusted-proxies.js";
import { z } from "./zod.js";
import { cronProblem, zoneSetting } from "./zones.js";

/**
 * `allowed_users` entries are a bare id or `{id, name}`: the output keeps the ids in `allowed_users`
 * (so every check of "is this user allowed" stays a lookup of an id) and the names in `user_names`.
 */
function withUserNames<I extends number | string, C extends { allowed_users: (I | { id: I; name: string })[] }>(c: C) {
  const user_names: Record<string, string> = {};
  const ids = c.allowed_users.map((u) => {
    if (typeof u !== "object") return u;
    user_names[String(u.id)] = u.name;
    return u.id;
  });
  return { ...c, allowed_users: ids, user_names };
}

const discordIdError = 'expected a Discord user id in quotes, e.g. "123456789012345678"';
const discordId = () => z.union([z.string().regex(/^\d+$/), z.int({ error: discordIdError })]).transform(String);
/** One flat union, so a too-big bare number is reported as such rather than as "Invalid input". */
const discordUser = () =>
  z
    .union([z.string().regex(/^\d+$/), z.int({ error: discordIdError }), z.strictObject({ id: discordId(), name: z.string().min(1) })])
    .transform((u) => (typeof u === "object" ? u : String(u)));

const telegram = () =>
  z
    .strictObject({
      enabled: z.boolean().default(false),
      token: z.string().default(""),
      allowed_users: z.array(z.union([z.int(), z.strictObject({ id: z.int(), name: z.string().min(1) })])).default([]),
      api_root: z.url().default("https://api.telegram.org"),
      poll_timeout_s: z.int().min(1).max(50).default(30),
      stream_replies: z.boolean().default(true),
    })
    .transform(withUserNames)
    .prefault({});

const discord = () =>
  z
    .strictObject({
      enabled: z.boolean().default(false),
      token: z.string().default(""),
      allowed_users: z.array(discordUser()).default([]),
      api_root: z.url().default("https://discord.com/api"),
      stream_replies: z.boolean().default(true),
    })
    .transform(withUserNames)
    .prefault({});

const cronJob = () =>
  z.strictObject({
    name: z.string().regex(/^[\w.-]+$/, "expected a name of letters, digits, '.', '_' or '-'"),
    schedule: z.string().min(1),
    prompt: z.string().min(1),
    deliver: deliveryTarget(),
    tools: z.array(enabledEntry()).optional(),
    enabled: z.boolean().default(true),
    timezone: zoneSetting().optional(),
  });

const httpHook = () =>
  z.strictObject({
    name: z.string().regex(/^[\w.-]+$/, "expected a name of letters, digits, '.', '_' or '-'"),
    prompt: z.string().min(1),
    deliver: deliveryTarget(),
    tools: z.array(enabledEntry()).optional(),
    /** HMAC-SHA256 key for `X-Hub-Signature-256`; empty = only the bearer token is accepted. */
    secret: z.string().default(""),
    /** The session the hook's runs go to; default `hook:<name>`. */
    session: z
      .string()
      .regex(/^[\w.:-]{1,64}$/, "expected a session key of letters, digits, '.', '_', ':' or '-'")
      .optional(),
    min_interval_s: z.number().min(0).default(0),
  });

/** `host:port` or `[v6]:port`. */
const LISTEN = /^(\[[0-9a-fA-F:.]+\]|[\w.-]+):(\d{1,5})$/;

const http = () =>
  z
    .strictObject({
      enabled: z.boolean().default(false),
      listen: z
        .string()
        .regex(LISTEN, "expected host:port, e.g. 127.0.0.1:8787")
        .refine((s) => Number(s.split(":").at(-1)) <= 65535, "the port must be at most 65535")
        .default("127.0.0.1:8787"),
      token: z.string().default(""),
      hooks: z.array(element(httpHook)).default([]),
      openai: section("connectors.http.openai", httpOpenAi),
      trusted_proxies: trustedProxies(),
    })
    .prefault({});

const cron = () =>
  z
    .strictObject({
      enabled: z.boolean().default(true),
      jobs: z.array(element(cronJob)).default([]),
      /** How late a slot missed during downtime may still run; default: half the period, 2 min to 2 h. */
      grace_s: z.number().positive().optional(),
      retries: z.int().min(0).max(10).default(2),
      retry_delay_s: z.number().positive().default(30),
    })
    .prefault({});

export const connectors = () =>
  z
    .strictObject({
      cli: section("connectors.cli", () =>
        z.strictObject({ enabled: z.boolean().default(true), socket: z.string().default("./data/hermes.sock") }).prefault({}),
      ),
      telegram: section("connectors.telegram", telegram),
      discord: section("connectors.discord", discord),
      cron: section("connectors.cron", cron),
      http: section("connectors.http", http),
      email: section("connectors.email", emailSchema),
      plugins: pluginEntries(),
    })
    .prefault({});

type Connectors = z.output<ReturnType<typeof connectors>>;

/** A chat that is on needs its bot's token. */
export function checkChats(c: Connectors, ctx: z.RefinementCtx): void {
  for (const name of ["telegram", "discord"] as const) {
    if (c[name].enabled && !c[name].token) {
      ctx.addIssue({
        code: "custom",
        path: ["connectors", name, "token"],
        message: `${name} is enabled but has no token (set ${name.toUpperCase()}_BOT_TOKEN in the environment)`,
      });
    }
  }
}

/** Jobs' names are unique, their schedules are cron expressions, and they deliver to a connector that is on. */
export function checkCron(c: Connectors, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  c.cron.jobs.forEach((job, i) => {
    const at = (key: string) => ["connectors", "cron", "jobs", i, key];
    if (seen.has(job.name)) ctx.addIssue({ code: "custom", path: at("name"), message: `duplicate job name '${job.name}'` });
    seen.add(job.name);
    const problem = cronProblem(job.schedule);
    if (problem) ctx.addIssue({ code: "custom", path: at("schedule"), message: problem });
    const undeliverable = deliverProblem(c, job.deliver);
    if (undeliverable) ctx.addIssue({ code: "custom", path: at("deliver"), message: undeliverable });
  });
}

/** The door needs its token; hooks' names are unique and they deliver to a connector that is on. */
export function checkHttp(c: Connectors, ctx: z.RefinementCtx): void {
  if (c.http.enabled && !c.http.token) {
    ctx.addIssue({
      code: "custom",
      path: ["connectors", "http", "token"],
      message: "http is enabled but has no token (set HERMES_HTTP_TOKEN in the environment)",
    });
  }
  const seen = new Set<string>();
  c.http.hooks.forEach((hook, i) => {
    const at = (key: string) => ["connectors", "http", "hooks", i, key];
    if (seen.has(hook.name)) ctx.addIssue({ code: "custom", path: at("name"), message: `duplicate hook name '${hook.name}'` });
    seen.add(hook.name);
    const problem = c.http.enabled ? deliverProblem(c, hook.deliver) : undefined;
    if (problem) ctx.addIssue({ code: "custom", path: at("deliver"), message: problem });
  });
}
