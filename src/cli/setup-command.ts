import { existsSync } from "node:fs";
import type { CliValues } from "./options.js";
import { setup } from "./setup.js";
import { userConfigPath } from "./socket-path.js";

/**
 * Where `hermes setup` writes: --config, $HERMES_CONFIG, the service's /etc/hermes/hermes.yaml when
 * run as root where it exists, else the user's ~/.config/hermes/hermes.yaml. Never a checkout's tracked
 * ./hermes.yaml (the defaults): a personal config lives outside the tree.
 */
export function setupTarget(values: CliValues, env: NodeJS.ProcessEnv = process.env): string {
  if (values.config) return values.config;
  if (env.HERMES_CONFIG) return env.HERMES_CONFIG;
  if (process.getuid?.() === 0 && existsSync("/etc/hermes/hermes.yaml")) return "/etc/hermes/hermes.yaml";
  const user = userConfigPath(env);
  if (!user) throw new Error("no home directory to write ~/.config/hermes/hermes.yaml to: pass --config PATH");
  return user;
}

export async function setupCommand(values: CliValues, sections: string[]): Promise<number> {
  return setup(setupTarget(values), sections, {
    modelUrl: values["model-url"],
    model: values.model,
    telegramToken: values["telegram-token"],
    discordToken: values["discord-token"],
    timezone: values.timezone,
    briefing: values.briefing,
    location: values.location,
    nonInteractive: values["non-interactive"],
    pair: values.pair,
  });
}
