import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, readDb } from "../helpers/hermes.js";
import { jpeg, png } from "./images.fixture.js";

describe("images on an OpenAI-compatible endpoint, and the limits of what is sent", () => {
  let model: FakeModel;

  beforeEach(async () => {
    model = await useModel();
  });

  it("sends text and image_url content parts with a data: URL, and only on the turn that brought the image", async () => {
    model.script({ text: "A logo." }, { text: "Blue." });
    const hermes = await useHermes(baseSettings(model.openaiUrl, "openai"));
    writeFileSync(join(hermes.dir, "logo.png"), png(256, 256));
    expect((await hermes.cli(["ask", "what is this", "--image", "logo.png"])).stdout).toBe("A logo.\n");
    expect((await hermes.ask("which colour?")).stdout).toBe("Blue.\n");
    const first = model.requests[0]?.messages.at(-1) as unknown as {
      content: { type: string; text?: string; image_url?: { url: string } }[];
    };
    expect(first.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/^what is this\n\[photo: 256×256 PNG/) });
    expect(first.content[1]).toEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${png(256, 256).toString("base64")}` },
    });
    const later = model.requests[1]?.messages.filter((m) => m.role === "user") ?? [];
    expect(later.map((m) => typeof m.content)).toEqual(["string", "string"]);
    expect(later[0]?.content).toBe(first.content[0]?.text);
  });

  it("an image turn's prompt tokens (which count the image) do not skew the model's token calibration", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision"];
    model.script({ text: "A photo.", promptTokens: 50_000 });
    const hermes = await useHermes(baseSettings(model.url));
    writeFileSync(join(hermes.dir, "p.jpg"), jpeg(800, 600));
    expect((await hermes.cli(["ask", "--image", "p.jpg"])).stdout).toBe("A photo.\n");
    const rows = readDb(hermes.dbPath, (db) => db.prepare("SELECT model FROM token_calibration").all());
    expect(rows).toEqual([]);
  });

  it("a turn with an image keeps room for it in the context: older turns give way first", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision"];
    const base = baseSettings(model.url);
    const hermes = await useHermes({
      ...base,
      model: { ...(base.model as object), context_tokens: 1400, max_output_tokens: 16 },
      tools: { enabled: [] },
      context: { summaries: false },
    });
    for (const n of [1, 2]) await hermes.ask(`${n} ${"words ".repeat(150)}`);
    writeFileSync(join(hermes.dir, "p.jpg"), jpeg(800, 600));
    await hermes.cli(["ask", "and this?", "--image", "p.jpg"]);
    await hermes.ask("and now?");
    const users = (i: number) => model.requests[i]?.messages.filter((m) => m.role === "user").length;
    expect(users(2)).toBe(1);
    expect(users(3)).toBe(4);
  });

  it("model.vision: false means no image is sent, whatever the server says; the refusal exits 1 with stop_reason refused", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision"];
    const base = baseSettings(model.url);
    const hermes = await useHermes({ ...base, model: { ...(base.model as object), vision: false } });
    writeFileSync(join(hermes.dir, "p.jpg"), jpeg(100, 100));
    const result = await hermes.cli(["ask", "--image", "p.jpg"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("cannot see images");
    const json = await hermes.cli(["ask", "--image", "p.jpg", "--json"]);
    const lines = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ type: "done", stop_reason: "refused", reply: expect.stringContaining("cannot see images") });
    expect(lines.find((e) => e.type === "run_end")).toMatchObject({ stopReason: "refused" });
    expect(model.requests).toHaveLength(0);
  });

  it("an image over model.max_image_px is refused with what to do, not sent", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision"];
    const hermes = await useHermes(baseSettings(model.url));
    writeFileSync(join(hermes.dir, "big.jpg"), jpeg(4032, 3024));
    const result = await hermes.cli(["ask", "--image", "big.jpg"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("4032×3024, larger than model.max_image_px (1568)");
    expect(model.requests).toHaveLength(0);
  });
});
