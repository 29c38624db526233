// The sections of hermes.yaml a file may leave out, and what each is then.
import { SECTION_DEFAULTS } from "./section-defaults.js";
import { z } from "./zod.js";

/** Set while the whole schema is made at once: for the JSON Schema and for the defaults themselves. */
let eager = false;

/** Every section `section` was asked for while eager, by name: what `sectionDefaults` reads. */
const makers = new Map<string, () => z.ZodType>();

/** How many sections' and entries' schemas were made when a parse first needed them, in this process. */
let madeLate = 0;

/**
 * A section a config may leave out (`agent:`, `connectors.discord:`, `tools.weather:`, …), by its path in the
 * file. Making the config's schema is zod's slowest work at a start (~20 ms of a ~260 ms start here), and most
 * files name a few of its ~30 sections: so a section the file leaves out is the defaults `npm run schema`
 * recorded for it (section-defaults.ts, which a test keeps in step with the schema), and its schema is made only
 * when the file has it. Its output is the same either way, as long as every default inside a section is a
 * constant: one read from the machine (the system's time zone, a home folder) would be the generating machine's
 * (the top-level `timezone` is no section for that reason).
 *
 * The type is the schema `make` returns, so the config's types are what they were; the object is a ZodDefault
 * of a ZodLazy of it, so only what every schema has (parsing it, its input and output types) may be used of it.
 */
export function section<T extends z.ZodType>(name: string, make: () => T): T {
  if (eager) makers.set(name, make);
  const absent = eager ? undefined : recorded(name);
  if (absent === undefined) return make();
  return late(make).default(() => structuredClone(absent) as z.util.NoUndefined<z.output<T>>) as unknown as T;
}

/**
 * The recorded defaults of the section at `name`'s path. Only the outermost sections are recorded: one inside
 * another (`connectors.http.openai`) is found in its parent's defaults, which `sectionDefaults` checks it is.
 */
function recorded(name: string): unknown {
  let value: unknown = SECTION_DEFAULTS;
  for (const key of name.split(".")) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * The schema of one entry of a list or map a file may leave empty (`model.fallbacks`, `connectors.cron.jobs`,
 * `mcp.servers`, …): made when the first entry is checked. Typed as `section` is, for the same reason.
 */
export function element<T extends z.ZodType>(make: () => T): T {
  return eager ? make() : (late(make) as unknown as T);
}

/** `make`'s schema, made when a parse first reaches it. */
const late = <T extends z.ZodType>(make: () => T) =>
  z.lazy(() => {
    madeLate++;
    return make();
  });

/** The sections' and entries' schemas made so far when a parse first needed them (what shows that the rest were not). */
export const schemasMadeLate = (): number => madeLate;

/** `make` with every section's schema made at once, as zod's JSON Schema needs. */
export function eagerly<T>(make: () => T): T {
  const was = eager;
  eager = true;
  try {
    return make();
  } finally {
    eager = was;
  }
}

/**
 * What each outermost section of `schema()`'s is when the file leaves it out, by name (sorted): what
 * section-defaults.ts records. Throws when a section inside another would not read as its parent's defaults
 * have it (a parent that changed its sections' output), since `recorded` finds it there.
 */
export function sectionDefaults(schema: () => z.ZodType): Record<string, unknown> {
  return eagerly(() => {
    makers.clear();
    schema(); // made at once, it names every section, the nested ones too
    const defaults = new Map([...makers].map(([name, make]) => [name, make().parse(undefined)]));
    for (const [name, value] of defaults) {
      const dot = name.lastIndexOf(".");
      if (dot < 0) continue;
      const parent = name.slice(0, dot);
      const inParent = (defaults.get(parent) as Record<string, unknown> | undefined)?.[name.slice(dot + 1)];
      if (JSON.stringify(inParent) !== JSON.stringify(value)) throw new Error(`${name}: its defaults differ from ${parent}'s`);
    }
    const outermost = [...defaults.keys()].filter((name) => !name.includes(".")).sort();
    return Object.fromEntries(outermost.map((name) => [name, defaults.get(name)]));
  });
}
