import { describe, expect, it } from "vitest";
import { createToolCallTextFilter } from "../../src/model/tool-call-stream.js";
import { parseToolCallText } from "../../src/model/tool-call-text.js";

interface Case {
  name: string;
  text: string;
  calls: { name: string; args?: unknown; error?: RegExp }[];
  rest: string;
  fenced?: boolean;
}

const T = "<tool_call>";
const E = "</tool_call>";

const cases: Case[] = [
  { name: "plain text", text: "Hello there.", calls: [], rest: "Hello there." },
  { name: "one call", text: `${T}\n{"name": "clock", "arguments": {}}\n${E}`, calls: [{ name: "clock", args: {} }], rest: "" },
  {
    name: "one call, arguments first",
    text: `${T}{"arguments": {"timezone": "UTC"}, "name": "clock"}${E}`,
    calls: [{ name: "clock", args: { timezone: "UTC" } }],
    rest: "",
  },
  {
    name: "two calls",
    text: `${T}\n{"name": "clock", "arguments": {}}\n${E}\n${T}\n{"name": "notes", "arguments": {"action": "list"}}\n${E}`,
    calls: [
      { name: "clock", args: {} },
      { name: "notes", args: { action: "list" } },
    ],
    rest: "",
  },
  {
    name: "text before",
    text: `Let me check the time.\n${T}{"name": "clock", "arguments": {}}${E}`,
    calls: [{ name: "clock" }],
    rest: "Let me check the time.",
  },
  {
    name: "text after",
    text: `${T}{"name": "clock", "arguments": {}}${E}\nOne moment.`,
    calls: [{ name: "clock" }],
    rest: "One moment.",
  },
  {
    name: "text between two calls",
    text: `First ${T}{"name": "a", "arguments": {}}${E} then ${T}{"name": "b", "arguments": {}}${E} done`,
    calls: [{ name: "a" }, { name: "b" }],
    rest: "First  then  done",
  },
  {
    name: "braces inside strings",
    text: `${T}{"name": "notes", "arguments": {"action": "add", "text": "use {curly} and } braces {"}}${E}`,
    calls: [{ name: "notes", args: { action: "add", text: "use {curly} and } braces {" } }],
    rest: "",
  },
  {
    name: "escaped quotes inside strings",
    text: `${T}{"name": "notes", "arguments": {"action": "add", "text": "she said \\"hi}\\""}}${E}`,
    calls: [{ name: "notes", args: { action: "add", text: 'she said "hi}"' } }],
    rest: "",
  },
  {
    name: "closing tag inside a string",
    text: `${T}{"name": "notes", "arguments": {"action": "add", "text": "a ${E} b"}}${E}`,
    calls: [{ name: "notes", args: { action: "add", text: `a ${E} b` } }],
    rest: "",
  },
  {
    name: "a final block cut off by the token limit",
    text: `Sure.\n${T}\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "long text that never`,
    calls: [{ name: "write_file", error: /cut off/ }],
    rest: "Sure.",
  },
  {
    name: "cut off right after the tag",
    text: `Checking.${T}`,
    calls: [{ name: "", error: /no JSON object/ }],
    rest: "Checking.",
  },
  {
    name: "malformed JSON: trailing comma",
    text: `${T}{"name": "clock", "arguments": {},}${E}`,
    calls: [{ name: "clock", error: /not valid JSON/ }],
    rest: "",
  },
  {
    name: "malformed JSON: single quotes",
    text: `${T}{'name': 'clock', 'arguments': {}}${E}`,
    calls: [{ name: "", error: /not valid JSON/ }],
    rest: "",
  },
  {
    name: "malformed JSON, then a good call",
    text: `${T}{"name": "clock", arguments: {}}${E}${T}{"name": "notes", "arguments": {"action": "list"}}${E}`,
    calls: [
      { name: "clock", error: /not valid JSON/ },
      { name: "notes", args: { action: "list" } },
    ],
    rest: "",
  },
  {
    name: "missing name",
    text: `${T}{"arguments": {"a": 1}}${E}`,
    calls: [{ name: "", error: /needs \{"name"/ }],
    rest: "",
  },
  {
    name: "arguments as a JSON string",
    text: `${T}{"name": "clock", "arguments": "{\\"timezone\\": \\"UTC\\"}"}${E}`,
    calls: [{ name: "clock", args: { timezone: "UTC" } }],
    rest: "",
  },
  {
    name: "arguments as a string that is not JSON",
    text: `${T}{"name": "clock", "arguments": "UTC please"}${E}`,
    calls: [{ name: "clock", error: /not JSON/ }],
    rest: "",
  },
  {
    name: "parameters instead of arguments",
    text: `${T}{"name": "clock", "parameters": {"timezone": "Asia/Tokyo"}}${E}`,
    calls: [{ name: "clock", args: { timezone: "Asia/Tokyo" } }],
    rest: "",
  },
  { name: "no arguments key", text: `${T}{"name": "clock"}${E}`, calls: [{ name: "clock", args: {} }], rest: "" },
  {
    name: "missing closing tag but complete JSON",
    text: `${T}{"name": "clock", "arguments": {}}`,
    calls: [{ name: "clock", args: {} }],
    rest: "",
  },
  {
    name: "nested arrays and objects",
    text: `${T}{"name": "x", "arguments": {"list": [1, {"a": [2, 3]}], "s": "]"}}${E}`,
    calls: [{ name: "x", args: { list: [1, { a: [2, 3] }], s: "]" } }],
    rest: "",
  },
  {
    name: "unicode text and arguments",
    text: `Ich schaue nach 🙂 ${T}{"name": "notes", "arguments": {"action": "search", "query": "Müsli"}}${E}`,
    calls: [{ name: "notes", args: { action: "search", query: "Müsli" } }],
    rest: "Ich schaue nach 🙂",
  },
  {
    name: "fenced JSON call",
    text: 'I will check.\n```json\n{"name": "clock", "arguments": {}}\n```',
    calls: [{ name: "clock", args: {} }],
    rest: "I will check.",
    fenced: true,
  },
  {
    name: "fenced JSON without a language",
    text: '```\n{"name": "notes", "arguments": {"action": "list"}}\n```',
    calls: [{ name: "notes", args: { action: "list" } }],
    rest: "",
    fenced: true,
  },
  {
    name: "fenced JSON that is data, not a call",
    text: 'Here is your data:\n```json\n{"name": "Sam", "age": 41}\n```',
    calls: [],
    rest: 'Here is your data:\n```json\n{"name": "Sam", "age": 41}\n```',
    fenced: true,
  },
  {
    name: "fenced JSON call ignored when fences are off",
    text: '```json\n{"name": "clock", "arguments": {}}\n```',
    calls: [],
    rest: '```json\n{"name": "clock", "arguments": {}}\n```',
  },
  {
    name: "fenced block with invalid JSON stays text",
    text: '```json\n{"name": "clock", "arguments": {\n```',
    calls: [],
    rest: '```json\n{"name": "clock", "arguments": {\n```',
    fenced: true,
  },
  {
    name: "empty block",
    text: `${T}${E} ok`,
    calls: [{ name: "", error: /no JSON object/ }],
    rest: "ok",
  },
  {
    name: "three calls on one line",
    text: `${T}{"name":"a","arguments":{}}${E}${T}{"name":"b","arguments":{}}${E}${T}{"name":"c","arguments":{}}${E}`,
    calls: [{ name: "a" }, { name: "b" }, { name: "c" }],
    rest: "",
  },
  {
    name: "a block shown in a fenced code block is an example",
    text: `Here is what a tool call looks like:\n\`\`\`xml\n${T}\n{"name": "clock", "arguments": {}}\n${E}\n\`\`\`\nThat is all.`,
    calls: [],
    rest: `Here is what a tool call looks like:\n\`\`\`xml\n${T}\n{"name": "clock", "arguments": {}}\n${E}\n\`\`\`\nThat is all.`,
    fenced: true,
  },
  {
    name: "a malformed block in a fence is an example too",
    text: `The format:\n\`\`\`\n${T}{"name": "<function-name>", "arguments": {<arguments>}}${E}\n\`\`\``,
    calls: [],
    rest: `The format:\n\`\`\`\n${T}{"name": "<function-name>", "arguments": {<arguments>}}${E}\n\`\`\``,
    fenced: true,
  },
  {
    name: "a block in inline code is text",
    text: `Wrap calls in \`${T}\` and \`${E}\` tags.`,
    calls: [],
    rest: `Wrap calls in \`${T}\` and \`${E}\` tags.`,
  },
  {
    name: "a real call after a fenced example",
    text: `Like this:\n\`\`\`\n${T}{"name": "a", "arguments": {}}${E}\n\`\`\`\nNow for real:\n${T}{"name": "clock", "arguments": {}}${E}`,
    calls: [{ name: "clock", args: {} }],
    rest: `Like this:\n\`\`\`\n${T}{"name": "a", "arguments": {}}${E}\n\`\`\`\nNow for real:`,
  },
  {
    name: "backticks inside a real call's arguments do not open code",
    text: `${T}{"name": "notes", "arguments": {"action": "add", "text": "\`\`\`js"}}${E}\n${T}{"name": "clock", "arguments": {}}${E}`,
    calls: [{ name: "notes", args: { action: "add", text: "```js" } }, { name: "clock" }],
    rest: "",
  },
  {
    name: "an inline backtick does not reach past the end of its line",
    text: `a stray \` here\n${T}{"name": "clock", "arguments": {}}${E}`,
    calls: [{ name: "clock" }],
    rest: "a stray ` here",
  },
];

describe("parsing tool calls written as text", () => {
  it("has a table of at least 25 real-looking outputs", () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  for (const c of cases) {
    it(c.name, () => {
      const parsed = parseToolCallText(c.text, { fenced: c.fenced ?? false });
      expect(parsed.text).toBe(c.rest);
      expect(parsed.calls).toHaveLength(c.calls.length);
      c.calls.forEach((want, i) => {
        const got = parsed.calls[i];
        expect(got?.name).toBe(want.name);
        expect(got?.id).toMatch(/^[a-zA-Z0-9]{9}$/);
        if (want.error) expect(got?.parseError).toMatch(want.error);
        else expect(got?.parseError).toBeUndefined();
        if (want.args !== undefined) expect(got?.args).toEqual(want.args);
      });
    });
  }
});

// Each reply is about 1 MB, just under what a client reads of one reply (MAX_REPLY_CHARS). A parse that
// searched to the end of the text for every block took 20 s and more on each; a linear one takes well under
// a second. So these tests have vitest's default timeout of 5 s rather than the suite's 30 s.
describe("parsing a reply of very many blocks", { timeout: 5_000 }, () => {
  it("reads 90,000 empty blocks, one broken call each", () => {
    const parsed = parseToolCallText(T.repeat(90_000));
    expect(parsed.text).toBe("");
    expect(parsed.calls).toHaveLength(90_000);
    expect(parsed.calls.at(-1)?.parseError).toMatch(/holds no JSON object/);
  });

  it("reads 20,000 blocks whose object never closes, one broken call each", () => {
    const parsed = parseToolCallText(`${T}{"name": "clock", "a": ${E}`.repeat(20_000));
    expect(parsed.text).toBe("");
    expect(parsed.calls).toHaveLength(20_000);
    expect(parsed.calls.every((c) => c.name === "clock" && /not valid JSON/.test(c.parseError ?? ""))).toBe(true);
  });
});

describe("the streamed-text filter", () => {
  const run = (pieces: string[], fenced = false) => {
    let out = "";
    const feed = createToolCallTextFilter(
      (t) => {
        out += t;
      },
      { fenced },
    );
    for (const p of pieces) feed(p);
    feed.flush();
    return out;
  };

  it("with fenced calls read, shows what the parser leaves as text, however it is split", () => {
    const call = '```json\n{"name": "clock", "arguments": {}}\n```';
    const other = '```json\n{"name": "clock", "arguments": {"timezone": "UTC"}}\n```';
    // [text, whether the parser takes a fenced call from it]
    const texts: [string, boolean][] = [
      [`Checking.\n${call}`, true],
      [`Checking.\n${call}\nand then:\n${other}`, true], // the parser takes the first
      ['Data:\n```json\n{"a": 1}\n```\nCode:\n```python\nprint("{")\n```\nend', false],
      [`Here is the script:\n\`\`\`bash\nls\n\`\`\`\nI'll run it:\n${call}`, true], // a code block's closing fence opens nothing
      [`Before ${T}{"name": "clock"}${E} and\n${call}`, false], // a tag block first: the fenced one stays text
      [`${call}\nthen ${T}{"name": "clock"}${E} done`, false], // a tag block after it: the same
      [`use \`\`\`foo\`\`\` here\n${call}\nafter`, true],
      ['````json\n{"name": "clock", "arguments": {}}\n````', true],
      ["````\n{}\n````", false],
      ['  ```json\n  {"name": "clock", "arguments": {}}\n  ```', false], // indented: no fence
      ['```json\r\n{"name": "clock", "arguments": {}}\r\n```\r\nok', true],
      ['```JSON\n{"name": "clock", "arguments": {}}\n```', true],
      ['Cut off:\n```json\n{"name": "clock", "argu', false], // never closed: text, let out at the end
      ["Ends like a fence:\n``", false],
      ["Ends like a tag: <tool_c", false],
      ['```json\n{"name": "clock", "arguments": {}}\n```x\nstill inside', false],
      [`${T}{"name": "clock", "arguments": {}}\nThe time follows.`, false], // a tag block without its close
      [`${T}{"name": "clock", "arguments": {}} extra${E} bye`, false],
      [`${T}{"name": "clock", "arg`, false],
      [`${T}not json${E} after`, false],
    ];
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const splits = (text: string) => {
      const all = [text.split(""), [text]];
      for (let k = 0; k < 60; k++) {
        const pieces: string[] = [];
        for (let at = 0; at < text.length; ) {
          const n = 1 + Math.floor(random() * 12);
          pieces.push(text.slice(at, at + n));
          at += n;
        }
        all.push(pieces);
      }
      return all;
    };
    for (const [text, isCall] of texts) {
      const parsed = parseToolCallText(text, { fenced: true });
      expect(parsed.calls.length > 0 && !parsed.calls[0]?.parseError && !text.includes(T)).toBe(isCall);
      const shown = run([text], true);
      for (const pieces of splits(text)) expect(run(pieces, true)).toBe(shown);
      // What is shown is the reply the parser leaves (up to the blank lines it tidies).
      const tidy = (t: string) =>
        t
          .replace(/\r/g, "")
          .replace(/\n{2,}/g, "\n")
          .trim();
      expect(tidy(shown)).toBe(tidy(parsed.text));
    }
    expect(run([`Checking.\n${call}`], false)).toBe(`Checking.\n${call}`); // without fenced, as before
  });

  it("hides a block split across many pieces and keeps the text around it", () => {
    expect(run(["Hi ", "<tool", "_ca", 'll>{"name":', '"clock"}</tool', "_call> bye"])).toBe("Hi  bye");
  });

  it("shows a block inside fenced or inline code verbatim, however it is split", () => {
    const text = `Example:\n\`\`\`xml\n${T}{"name": "clock"}${E}\n\`\`\`\nand \`${T}\` inline.`;
    expect(run([text])).toBe(text);
    expect(run(text.split(""))).toBe(text);
    expect(run(["Example:\n`", "``xml\n<tool", "_call>{}", "</tool_call>\n``", "`"])).toBe(
      "Example:\n```xml\n<tool_call>{}</tool_call>\n```",
    );
  });

  it("hides a real block after a fenced example", () => {
    const pieces = ["```\n<tool_call>x</tool_call>\n```\n", "Now: <tool_", 'call>{"name":"clock"}</tool_call> done'];
    expect(run(pieces)).toBe("```\n<tool_call>x</tool_call>\n```\nNow:  done");
  });

  it("releases text that only looked like the start of a tag", () => {
    expect(run(["a <t", "able> b"])).toBe("a <table> b");
  });
});
