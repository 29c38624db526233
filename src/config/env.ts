/**
 * `${VAR}` and `${VAR:-default}` in config values. Kept free of imports: the CLI client uses it too
 * and must start fast.
 */
const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces every reference; `onValue` sees each value that came from the environment (a secret, maybe), and
 * `onUnset` each variable that is unset and has no default (it becomes empty; `${VAR:-}` says so on purpose).
 */
export function substituteEnvRefs(
  text: string,
  env: NodeJS.ProcessEnv,
  onValue?: (value: string) => void,
  onUnset?: (name: string) => void,
): string {
  return text.replace(ENV_REF, (_m, name: string, fallback?: string) => {
    const value = env[name];
    if (value) onValue?.(value);
    if (value === undefined && fallback === undefined) onUnset?.(name);
    return value ?? fallback ?? "";
  });
}
