import type { Db } from "./db.js";

export interface Memory {
  id: number;
  fact: string;
  created_at: number;
}

/** Short facts about the owner, and the per-model token calibration: small, long-lived state. */
export class MemoryStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      add: db.prepare("INSERT INTO memories (fact, created_at) VALUES (?, ?) RETURNING id, fact, created_at"),
      list: db.prepare("SELECT id, fact, created_at FROM memories WHERE forgotten_at IS NULL ORDER BY id"),
      count: db.prepare("SELECT COUNT(*) FROM memories WHERE forgotten_at IS NULL").pluck(),
      forget: db.prepare("UPDATE memories SET forgotten_at = ? WHERE id = ? AND forgotten_at IS NULL"),
      loadRatio: db.prepare("SELECT ratio FROM token_calibration WHERE model = ?").pluck(),
      saveRatio: db.prepare(
        "INSERT INTO token_calibration (model, ratio, updated_at) VALUES (?, ?, ?) ON CONFLICT(model) DO UPDATE SET ratio = excluded.ratio, updated_at = excluded.updated_at",
      ),
    };
  }

  remember(fact: string): Memory {
    return this.q.add.get(fact, Date.now()) as Memory;
  }

  list(): Memory[] {
    return this.q.list.all() as Memory[];
  }

  count(): number {
    return this.q.count.get() as number;
  }

  forget(id: number): boolean {
    return this.q.forget.run(Date.now(), id).changes > 0;
  }

  loadRatio(model: string): number | undefined {
    return (this.q.loadRatio.get(model) as number | undefined) ?? undefined;
  }

  saveRatio(model: string, ratio: number): void {
    this.q.saveRatio.run(model, ratio, Date.now());
  }
}

/** The block the model sees at the start of every run; byte-identical while the facts do not change. */
export function memoryBlock(memories: Memory[], maxChars = 2000): string {
  if (memories.length === 0) return "";
  const lines: string[] = [];
  let size = 0;
  for (const m of memories) {
    const line = `- ${m.fact} (#${m.id})`;
    if (size + line.length > maxChars) break;
    lines.push(line);
    size += line.length + 1;
  }
  return `What you know about the owner (manage with the memory tool):\n${lines.join("\n")}`;
}
