#!/usr/bin/env node
// The bundled `hermes` command (dist/app/hermes.js): turns on V8's code cache for the chunks, then runs
// the CLI. It is CommonJS, so that the cache can reach the chunks on Node 20 too (see compile-cache.ts).
import { join } from "node:path";
import { useCompileCache } from "./compile-cache.js";

useCompileCache(join(__dirname, "chunks"));
void import("./main.js");
