// Makes the built CLI entry executable so `npx hermes` and the bin link work after `npm ci`.
import { chmodSync } from "node:fs";

chmodSync(new URL("../dist/src/cli/main.js", import.meta.url), 0o755);
