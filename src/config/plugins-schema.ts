import { element } from "./sections.js";
import { z } from "./zod.js";

/** The built-in connectors a `deliver` target may name; any other prefix must be a plugin entry's name. */
const BUILT_IN_TARGETS = ["telegram", "discord", "cli", "email"] as const;
/** The shapes of the built-in connectors' targets (a plugin's chat ids are its own). */
const BUILT_IN_SHAPE = /^(telegram:-?\d+|discord:(user:)?\d+|cli:[\w.-]+|email:[^\s@:]+@[^\s@]+)$/;

/**
 * A `deliver` target's shape: a built-in's (checked further by `deliverProblem`) or `<plugin>:<chat>` with any
 * chat id; whether the prefix names a connector that is on is `deliverProblem`'s question.
 */
export const deliveryTarget = () =>
  z
    .string()
    .regex(
      /^[a-z0-9_-]+:.+$/,
      "expected telegram:<chat_id>, discord:<channel_id>, discord:user:<id>, cli:<name>, email:<address> or <plugin>:<chat>",
    );

/** A plugin's name: it prefixes session keys and delivery targets (`echo:<chat>`), so it is short and plain. */
export const PLUGIN_NAME = /^[a-z0-9_-]+$/;

/** The built-in connectors' names and the other prefixes of hermes' session keys (`api:<user>`: the OpenAI door). */
const RESERVED = new Set(["cli", "telegram", "discord", "cron", "http", "hook", "email", "api"]);

const pluginEntry = () =>
  z.strictObject({
    name: z
      .string()
      .regex(PLUGIN_NAME, "expected a name of a-z, 0-9, '_' or '-'")
      .refine((n) => !RESERVED.has(n), "this name belongs to hermes (a built-in connector or the OpenAI door's sessions); choose another"),
    /** A path (relative to hermes.yaml) or the name of an installed package. */
    module: z.string().min(1, "expected a path such as ./plugins/echo.mjs or a package name"),
    /**
     * Who may reach the model through it; everyone else gets one notice naming their id. Numbers are read as
     * text; one too large to be exact (over 2^53, as many networks' ids are) is refused, since the YAML parser
     * has already rounded it to another user's id.
     */
    allowed_users: z
      .array(
        z
          .union([z.string(), z.int({ error: 'expected a user id; write a number this large in quotes, e.g. "123456789012345678"' })])
          .transform(String),
      )
      .default([]),
    /** Handed to the plugin's `create` after ${VAR} substitution (and checked by its schema, when it has one). */
    options: z.record(z.string(), z.unknown()).default({}),
  });

/** `connectors.plugins`: connector plugins loaded from the config (SPEC §17). */
export const pluginEntries = () =>
  z
    .array(element(pluginEntry))
    .default([])
    .superRefine((entries, ctx) => {
      const seen = new Set<string>();
      entries.forEach((entry, i) => {
        if (seen.has(entry.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `duplicate plugin name '${entry.name}'` });
        seen.add(entry.name);
      });
    });

export type PluginEntry = z.output<ReturnType<typeof pluginEntry>>;

interface DeliverTargets {
  telegram: { enabled: boolean };
  discord: { enabled: boolean };
  cli: { enabled: boolean };
  email: { enabled: boolean };
  plugins: { name: string }[];
}

/** Why a `deliver` target cannot be delivered to with these connectors, or undefined when it can. */
export function deliverProblem(connectors: DeliverTargets, target: string): string | undefined {
  const prefix = target.split(":")[0] ?? "";
  const builtIn = BUILT_IN_TARGETS.find((n) => n === prefix);
  if (builtIn && !BUILT_IN_SHAPE.test(target))
    return "expected telegram:<chat_id>, discord:<channel_id>, discord:user:<id>, cli:<name> or email:<address>";
  if (builtIn) return connectors[builtIn].enabled ? undefined : `delivers to ${builtIn}, but connectors.${builtIn} is not enabled`;
  if (connectors.plugins.some((p) => p.name === prefix)) return undefined;
  const known = [...BUILT_IN_TARGETS, ...connectors.plugins.map((p) => p.name)].join(", ");
  return `unknown delivery target prefix '${prefix}': known prefixes are ${known} (the built-in connectors and connectors.plugins entries)`;
}
