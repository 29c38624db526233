import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { Client, DaemonForbidden, DaemonUnreachable } from "./client.js";
import { socketPathOf } from "./socket-path.js";

/**
 * `hermes backup [PATH]`: the running daemon copies its database (SQLite's online backup on its own
 * connection, so the copy is consistent under load); when it is not running, this process does.
 */
export async function backupCommand(configPath: string, path: string | undefined): Promise<number> {
  const target = path === undefined ? undefined : resolve(path);
  let client: Client | undefined;
  try {
    client = await Client.connect(await socketPathOf(configPath));
  } catch (err) {
    if (!(err instanceof DaemonUnreachable)) throw err;
  }
  if (client) {
    try {
      const reply = await client.call({ op: "backup", ...(target && { path: target }) });
      if (reply.type !== "result") throw new Error(reply.type === "error" ? reply.error.message : "unexpected reply");
      (reply.ok ? process.stdout : process.stderr).write(`${reply.message}\n`);
      return reply.ok ? 0 : 1;
    } finally {
      client.close();
    }
  }
  const { loadConfig } = await import("../config/load.js");
  const { backupDatabase, backupInto, backupSettings, describeBackup, hasHermesTables } = await import("../store/backup.js");
  const { default: Database } = await import("better-sqlite3");
  const { storage } = loadConfig(configPath).config;
  const unset = `${storage.path} holds nothing to back up yet: hermes sets it up at its first start`;
  if (!existsSync(storage.path)) return failed(unset);
  const db = new Database(storage.path, { readonly: true, fileMustExist: true });
  try {
    if (!hasHermesTables(db)) return failed(unset);
    const done = target ? await backupDatabase(db, target) : await backupInto(db, backupSettings(storage));
    process.stdout.write(`${describeBackup(done)}\n`);
    return 0;
  } catch (err) {
    return failed((err as Error).message);
  } finally {
    db.close();
  }
}

function failed(why: string): number {
  process.stderr.write(`backup failed: ${why}\n`);
  return 1;
}

/** `hermes restore PATH`: only while the daemon is stopped; the backup is checked first, the replaced database kept aside. */
export async function restoreCommand(configPath: string, path: string | undefined): Promise<number> {
  if (!path) {
    process.stderr.write("usage: hermes restore PATH\n");
    return 2;
  }
  const socket = await socketPathOf(configPath);
  // A socket this user may not open does not say the daemon is stopped: that error ends the command.
  const running = await Client.connect(socket).then(
    (c) => {
      c.close();
      return true;
    },
    (err: unknown) => {
      if (err instanceof DaemonForbidden) throw err;
      return false;
    },
  );
  if (running) {
    process.stderr.write("hermes is running: stop it first (`systemctl stop hermes`, or end `hermes start`), then restore.\n");
    return 1;
  }
  const { loadConfig } = await import("../config/load.js");
  const { restoreDatabase } = await import("../store/backup.js");
  const target = loadConfig(configPath).config.storage.path;
  // Without its CLI socket (turned off in the config) a running daemon still holds the database's claim: the
  // file it writes to would be put aside, and every message after the restore kept in that one.
  const holder = (await import("../daemon/single-instance.js")).databaseHolder(target);
  if (holder !== undefined) {
    process.stderr.write(`hermes is running (pid ${holder}, using ${target}): stop it first (\`systemctl stop hermes\`), then restore.\n`);
    return 1;
  }
  try {
    const { aside } = restoreDatabase(resolve(path), target);
    process.stdout.write(
      `restored ${resolve(path)} to ${target} (integrity_check ok)${aside ? `; the replaced database is kept as ${aside}` : ""}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`hermes: not restored: ${(err as Error).message}\n`);
    return 1;
  }
}
