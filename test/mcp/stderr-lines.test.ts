import { describe, expect, it } from "vitest";
import { boundedLines } from "../../src/mcp/stderr-lines.js";

describe("an MCP server's stderr in the log", () => {
  const collect = (perMinute = 100) => {
    let clock = 0;
    const lines: string[] = [];
    const dropped: number[] = [];
    const write = boundedLines(
      (l) => lines.push(l),
      (n) => dropped.push(n),
      { maxLine: 500, perMinute, now: () => clock },
    );
    const tick = (ms: number) => {
      clock += ms;
    };
    return { write, lines, dropped, tick };
  };

  it("keeps a line up to the cap however long it runs before its newline, across chunks", () => {
    const s = collect();
    for (let i = 0; i < 2000; i++) s.write("x".repeat(5000)); // 10 MB with no newline
    s.write("tail\nnext line\n");
    expect(s.lines).toEqual(["x".repeat(500), "next line"]);
  });

  it("keeps a character whose bytes came in two chunks whole", () => {
    const s = collect();
    const bytes = Buffer.from("Grüße, 東京\n");
    s.write(bytes.subarray(0, 3)); // "Gr" and the first byte of ü
    s.write(bytes.subarray(3, 12)); // cuts 東 after its first byte
    s.write(bytes.subarray(12));
    expect(s.lines).toEqual(["Grüße, 東京"]);
  });

  it("logs at most the minute's share of lines, then says how many it left out", () => {
    const s = collect(100);
    s.write("spam\n".repeat(1000));
    expect(s.lines).toHaveLength(100);
    expect(s.dropped).toEqual([]);
    s.tick(60_000);
    s.write("after a minute\n");
    expect(s.dropped).toEqual([900]);
    expect(s.lines.at(-1)).toBe("after a minute");
  });
});
