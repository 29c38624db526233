import type Database from "better-sqlite3";

/** Returns a statement (`db.prepare(…)`, maybe `.pluck()`-ed); typed loosely so that each keeps its own parameters. */
type Prepare = () => unknown;

/** The statements each database's stores declared, so that a check can prepare them all (`prepareAll`). */
const declared = new WeakMap<Database.Database, Prepare[]>();

/**
 * A store's statements, each prepared at its first use and kept: the stores declare ~90, and a start runs
 * a handful, so opening the store no longer compiles all of them (~5 ms of the start to READY), and a
 * statement that this daemon never runs (an export's, a listing's) holds no memory.
 */
export function statements<T extends Record<string, Prepare>>(
  db: Database.Database,
  prepare: T,
): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const made = {} as Record<string, unknown>;
  for (const [name, make] of Object.entries(prepare)) {
    Object.defineProperty(made, name, {
      enumerable: true,
      configurable: true,
      get() {
        const statement = make();
        Object.defineProperty(made, name, { value: statement, enumerable: true });
        return statement;
      },
    });
  }
  const list = declared.get(db) ?? [];
  list.push(...Object.keys(prepare).map((name) => () => made[name]));
  declared.set(db, list);
  return made as { readonly [K in keyof T]: ReturnType<T[K]> };
}

/** Prepares every statement declared on `db` so far; throws the first that SQLite rejects (a typo, a missing column). */
export function prepareAll(db: Database.Database): number {
  const list = declared.get(db) ?? [];
  for (const prepare of list) prepare();
  return list.length;
}
