import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema, TOOL_NAMES } from "../../src/config/schema.js";
import type { ToolSpec } from "../../src/model/types.js";
import { openStore } from "../../src/store/store.js";
import { toolSpec } from "../../src/tools/define.js";
import { loadTools } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";
import { type FakeModel, type RecordedRequest, startFakeModel, type Turn } from "../fakes/model-server.js";
import { baseSettings, createTempDir, type Hermes, startHermes } from "../helpers/hermes.js";

type Schema = { type?: string; properties?: Record<string, Schema>; required?: string[]; enum?: unknown[]; description?: string };

/** The JSON objects after "Example:" in a tool's description: what the model is shown to send. */
function examplesOf(description: string): unknown[] {
  const tail = description.slice(description.indexOf("Example:"));
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  for (let i = 0; i < tail.length; i++) {
    if (tail[i] === "{" && depth++ === 0) start = i;
    if (tail[i] === "}" && --depth === 0) out.push(JSON.parse(tail.slice(start, i + 1)));
  }
  return out;
}

/** What the flattened schema says an action needs besides itself ("needs add: text; delete: id"). */
function needsOf(action: Schema | undefined): Record<string, string[]> {
  const text = action?.description?.replace(/^needs /, "") ?? "";
  return Object.fromEntries(
    text
      .split("; ")
      .filter(Boolean)
      .map((part) => {
        const [name = "", keys = ""] = part.split(": ");
        return [name, keys.split(", ")];
      }),
  );
}

const typeOf = (v: unknown) => (Number.isInteger(v) ? "integer" : typeof v);
const fits = (prop: Schema, v: unknown) =>
  prop.type === undefined || prop.type === typeOf(v) || (prop.type === "number" && typeof v === "number") || prop.enum?.includes(v);

/**
 * A call a model builds from the spec alone: the action from its enum, the keys the action's description
 * says it needs, every key and value checked against the schema's properties and types.
 */
function callFrom(spec: ToolSpec, args: Record<string, unknown>): Record<string, unknown> {
  const schema = spec.parameters as Schema;
  for (const key of schema.required ?? []) expect(args, `${spec.name} needs ${key}`).toHaveProperty(key);
  for (const [key, value] of Object.entries(args)) {
    const prop = schema.properties?.[key];
    expect(prop, `${spec.name} has no property ${key}`).toBeDefined();
    expect(fits(prop as Schema, value), `${spec.name}.${key} is a ${prop?.type}`).toBe(true);
  }
  const action = schema.properties?.action;
  if (action) {
    expect(action.enum).toContain(args.action);
    for (const key of needsOf(action)[String(args.action)] ?? [])
      expect(args, `${spec.name} ${args.action} needs ${key}`).toHaveProperty(key);
  }
  return args;
}

describe("the model-facing tool schemas", () => {
  const dir = createTempDir();
  const store = openStore(":memory:");
  let tools: Map<string, AnyTool>;
  beforeAll(async () => {
    const config = configSchema().parse({
      timezone: "Europe/Berlin",
      tools: { files: { root: join(dir.path, "files") }, web_search: { url: "http://127.0.0.1:9" }, calendar: { sources: [] } },
    });
    ({ tools } = await loadTools(TOOL_NAMES, { config, store, now: () => new Date("2026-11-29T17:00:00Z") }));
  });
  afterAll(() => {
    store.close();
    dir.cleanup();
  });

  it("are flat objects: no variants, no additionalProperties, the action an enum that says what each action needs", () => {
    for (const tool of tools.values()) {
      const spec = toolSpec(tool);
      const text = JSON.stringify(spec.parameters);
      expect(text, tool.name).not.toMatch(/"(oneOf|anyOf|additionalProperties)"/);
      expect((spec.parameters as Schema).type, tool.name).toBe("object");
    }
    const notes = toolSpec(tools.get("notes") as AnyTool).parameters as Schema;
    expect(notes.properties?.action).toEqual({
      type: "string",
      enum: ["add", "list", "search", "delete"],
      description: "needs add: text; search: query; delete: id",
    });
    expect(notes.required).toEqual(["action"]);
  });

  it("agree with every example in the descriptions, which zod accepts", () => {
    let examples = 0;
    for (const tool of tools.values()) {
      const spec = toolSpec(tool);
      for (const example of examplesOf(tool.description)) {
        callFrom(spec, example as Record<string, unknown>);
        expect(tool.input.safeParse(example).success, `${tool.name} ${JSON.stringify(example)}`).toBe(true);
        examples++;
      }
    }
    expect(examples).toBeGreaterThanOrEqual(TOOL_NAMES.length);
  });

  it("are still validated strictly by zod: a missing needed key, an unknown key, a wrong action or a bad length is refused", () => {
    const input = (name: string) => (tools.get(name) as AnyTool).input;
    for (const name of ["notes", "remind", "memory"]) {
      const action = (toolSpec(tools.get(name) as AnyTool).parameters as Schema).properties?.action;
      for (const [act, keys] of Object.entries(needsOf(action))) {
        expect(keys.length).toBeGreaterThan(0);
        expect(input(name).safeParse({ action: act }).success, `${name} ${act} without ${keys}`).toBe(false);
      }
    }
    expect(input("notes").safeParse({ action: "list", text: "x" }).success).toBe(false);
    expect(input("notes").safeParse({ action: "add", text: "" }).success).toBe(false);
    expect(input("notes").safeParse({ action: "drop" }).success).toBe(false);
    expect(input("notes").safeParse({ action: "delete", id: 0 }).success).toBe(false);
    expect(input("read_file").safeParse({ path: "a", extra: 1 }).success).toBe(false);
    expect(input("read_file").safeParse({ path: "" }).success).toBe(false);
    expect(input("write_file").safeParse({ path: "a", content: "x".repeat(1_000_001) }).success).toBe(false);
  });
});

describe("calls built from the schemas a daemon sends", () => {
  let model: FakeModel;
  let hermes: Hermes;
  beforeAll(async () => {
    model = await startFakeModel();
    hermes = await startHermes({
      ...baseSettings(model.url),
      agent: { confirm: [] },
      tools: { enabled: ["clock", "notes", "remind", "memory", "read_file", "list_files", "write_file"] },
    });
  });
  afterAll(async () => {
    await hermes.stop();
    await model.close();
  });

  /** One turn: the model calls `name` with `args` checked against the spec it was sent, then repeats the result. */
  const turn = async (name: string, args: Record<string, unknown>) => {
    model.respond((req: RecordedRequest): Turn => {
      const result = req.messages.at(-1);
      if (result?.role === "tool") return { text: `RESULT ${result.content}` };
      const spec = (req.tools as { function: ToolSpec }[]).find((t) => t.function.name === name)?.function;
      expect(spec, name).toBeDefined();
      return { toolCalls: [{ name, arguments: callFrom(spec as ToolSpec, args) }] };
    });
    const out = await hermes.ask(`use ${name}`);
    return out.stdout;
  };

  it("every default action, and memory, runs right", async () => {
    expect(await turn("clock", { timezone: "America/New_York" })).toMatch(/RESULT .*2\d{3}/);
    expect(await turn("notes", { action: "add", text: "buy milk" })).toContain("Saved note #1.");
    expect(await turn("notes", { action: "search", query: "milk" })).toMatch(/#1 .*buy milk/);
    expect(await turn("notes", { action: "list" })).toContain("buy milk");
    expect(await turn("notes", { action: "delete", id: 1 })).toContain("Deleted note #1.");
    expect(await turn("remind", { action: "create", text: "call mum", in_minutes: 30 })).toMatch(/Reminder #1 set: "call mum"/);
    expect(await turn("remind", { action: "list" })).toContain("call mum");
    expect(await turn("remind", { action: "cancel", id: 1 })).toMatch(/#1/);
    expect(await turn("memory", { action: "remember", fact: "is vegetarian" })).toMatch(/RESULT .*vegetarian/);
    expect(await turn("memory", { action: "list" })).toContain("is vegetarian");
    expect(await turn("write_file", { path: "shopping.txt", content: "milk\neggs" })).toContain("Wrote 9 bytes to shopping.txt.");
    expect(await turn("read_file", { path: "shopping.txt" })).toContain("milk\neggs");
    expect(await turn("list_files", {})).toContain("shopping.txt");
  });
});
