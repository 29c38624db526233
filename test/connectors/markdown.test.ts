import { describe, expect, it } from "vitest";
import { splitMarkdown } from "../../connectors/markdown.js";

describe("splitting Markdown for Discord's 2000-character messages", () => {
  it("keeps a short reply whole", () => {
    expect(splitMarkdown("Hello **there**.\n\nSecond paragraph.", 2000)).toEqual(["Hello **there**.\n\nSecond paragraph."]);
  });

  it("closes a code block cut in two and reopens it, with its language, in the next message", () => {
    const code = Array.from({ length: 120 }, (_, i) => `console.log(${i}); // line ${i}`);
    const parts = splitMarkdown(`Here:\n\n\`\`\`js\n${code.join("\n")}\n\`\`\`\n\nThat is all.`, 2000);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(2000);
    const fenced = parts.filter((p) => p.includes("```"));
    for (const part of fenced) expect(part.match(/```/g)?.length ?? 0).toBe(2);
    expect(fenced.every((p) => p.includes("```js\n"))).toBe(true);
    const lines = parts
      .join("\n")
      .split("\n")
      .filter((l) => l.startsWith("console.log"));
    expect(lines).toEqual(code);
    expect(parts.at(-1)?.endsWith("That is all.")).toBe(true);
  });

  it("cuts a single line longer than a message, losing nothing", () => {
    const line = "x".repeat(4500);
    const parts = splitMarkdown(line, 2000);
    expect(parts.every((p) => p.length <= 2000)).toBe(true);
    expect(parts.join("")).toBe(line);
  });

  it("cuts a long line of emoji between whole characters, never into halves of one", () => {
    const line = `a${"😀".repeat(3000)}`;
    const parts = splitMarkdown(line, 2000);
    expect(parts.join("")).toBe(line);
    for (const part of parts) expect(part).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  it("keeps a fence whose language is not a plain word (c#), or has more after it, and a fence line inside code as code", () => {
    const code = Array.from({ length: 120 }, (_, i) => `Console.WriteLine(${i}); // line ${i}`);
    const parts = splitMarkdown(`In C#:\n\n\`\`\`c# title="Program.cs"\n${code.join("\n")}\n\`\`\`\n\nThat is all.`, 2000);
    expect(parts.length).toBeGreaterThan(1);
    const fenced = parts.filter((p) => p.includes("```"));
    expect(fenced.every((p) => p.includes("```c#\n") && p.match(/```/g)?.length === 2)).toBe(true);
    expect(parts.at(-1)?.endsWith("```\n\nThat is all.")).toBe(true);
    const nested = splitMarkdown("Markdown:\n\n```md\n```python\nprint(1)\n```\n\nafter", 2000);
    expect(nested).toEqual(["Markdown:\n\n```md\n```python\nprint(1)\n```\n\nafter"]);
  });
});
