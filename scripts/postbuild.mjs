// After tsc: bundles the `hermes` command into dist/app/ (hermes.js and chunks/), the file the bin, the
// systemd units and the tests run. One file per lazily loaded part instead of ~300 modules spread over
// node_modules halves Node's module loading at start (resolution, file reads, the CommonJS export
// lexer); the code is not minified (only doc comments are dropped), so stack traces stay readable. The
// bundle is CommonJS: Node loads it faster than ES modules (~34 ms of a ~190 ms start here), and on
// Node 20 only CommonJS can be given V8's code cache (src/cli/compile-cache.ts).
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const shim = (name) => fileURLToPath(new URL(`./shims/${name}`, import.meta.url));
const dist = (path) => fileURLToPath(new URL(`../dist/${path}`, import.meta.url));

// Big, and loaded only when enabled (pino-pretty: on a terminal). pino and better-sqlite3 are bundled too:
// left outside they were 45 of a start's 73 module loads, whose path handling alone got hot enough for V8
// to bring up its optimizing compiler, 5 MB of an idle daemon on Node 24. So are the mail libraries, in
// chunks of their own that only connectors.email loads: from their packages, imapflow alone was 146 files
// at the email connector's start (the same compiler woken, ~6 MB on Node 24), mailparser and nodemailer
// 90 more at the first mail.
const external = [/^node:/, /^pino-pretty$/, /^discord\.js$/, /^@discordjs\//, /^openai$/];

rmSync(dist("app"), { recursive: true, force: true });
await build({
  input: { hermes: dist("src/cli/main.js") },
  platform: "node",
  external,
  resolve: {
    // node-fetch (grammY's HTTP client) uses Node's own URL and falls back to whatwg-url only on old
    // Nodes; the fallback would add 300 KB (its Unicode table) to parse at every start. `bindings` finds
    // better-sqlite3's addon from the package instead of from a stack that now points into the bundle;
    // thread-stream (pino's transports, unused) would start worker_threads at every start.
    alias: {
      "whatwg-url": shim("whatwg-url.mjs"),
      bindings: shim("bindings.cjs"),
      "thread-stream": shim("thread-stream.cjs"),
      // imapflow pins a pino of its own (a patch release apart): the bundle's one serves it too.
      pino: fileURLToPath(new URL("../node_modules/pino/pino.js", import.meta.url)),
    },
  },
  output: {
    dir: dist("app"),
    format: "cjs",
    // A chunk's name carries a hash of its content: the compile cache keys its entries by it.
    chunkFileNames: "chunks/[name]-[hash].js",
    // What every command runs (the entry and its static imports: the socket client, `ask`'s rendering,
    // the config's ${VAR} substitution, the compile cache) in one chunk: a client command loads three files.
    codeSplitting: { groups: [{ name: "entry", tags: ["$initial"] }] },
    // Packages left outside the bundle are required too, not imported through the slower ESM loader.
    dynamicImportInCjs: false,
    // V8 keeps the source of every chunk it loads, at two bytes a character if one of them is beyond
    // Latin-1. Doc comments (with their dashes and arrows) are dropped, licences kept, and the rest
    // escaped to ASCII: the sources in memory take less than half of what they did (`footprint.test.ts`).
    comments: { legal: true, annotation: false, jsdoc: false },
    charset: "ascii",
  },
  logLevel: "warn",
});
writeFileSync(dist("app/package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
chmodSync(dist("app/hermes.js"), 0o755);
