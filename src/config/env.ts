/**
 * `${VAR}` and `${VAR:-default}` in config values. Kept free of imports: the CLI client uses it too
 * and must start fast.
 */
const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces every reference; `onValue` sees each value that came from the environment (a secret, maybe). */
export function substituteEnvRefs(text: string, env: NodeJS.ProcessEnv, onValue?: (value: string) => void): string {
  return text.replace(ENV_REF, (_m, name: string, fallback?: string) => {
    const value = env[name];
    if (value) onValue?.(value);
    return value ?? fallback ?? "";
  });
}
