// After tsc: bundles the `hermes` command into dist/app/ (hermes.js and chunks/), the file the bin, the
// systemd units and the tests run. One ESM file per lazily loaded part instead of ~300 modules spread over
// node_modules halves Node's module loading at start (resolution, file reads, the CommonJS export
// lexer); the code is not minified, so stack traces stay readable.
import { chmodSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const dist = (path) => fileURLToPath(new URL(`../dist/${path}`, import.meta.url));

// Loaded by path at run time (native addon, worker-thread transports) or big and loaded only when enabled.
const external = [/^node:/, /^better-sqlite3$/, /^pino(-pretty)?$/, /^discord\.js$/, /^@discordjs\//, /^openai$/];

rmSync(dist("app"), { recursive: true, force: true });
await build({
  input: { hermes: dist("src/cli/main.js") },
  platform: "node",
  external,
  resolve: {
    // node-fetch (grammY's HTTP client) uses Node's own URL and falls back to whatwg-url only on old
    // Nodes; the fallback would add 300 KB (its Unicode table) to parse at every start.
    alias: { "whatwg-url": fileURLToPath(new URL("./shims/whatwg-url.mjs", import.meta.url)) },
  },
  output: {
    dir: dist("app"),
    format: "esm",
    chunkFileNames: "chunks/[name]-[hash].js",
  },
  logLevel: "warn",
});
chmodSync(dist("app/hermes.js"), 0o755);
