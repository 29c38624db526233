// `npm ci` in a checkout builds dist/ from the sources. An install without dev dependencies (the copy
// deploy/install.sh makes, `npm ci --omit=dev`) has no compiler: it runs the dist/ it was given.
import { execSync } from "node:child_process";
import { existsSync } from "node:fs";

const here = (path) => new URL(`../${path}`, import.meta.url);

if (existsSync(here("node_modules/typescript/package.json"))) {
  execSync("npm run build", { stdio: "inherit", cwd: here(".") });
} else if (!existsSync(here("dist/app/hermes.js"))) {
  console.error("hermes: no dist/ to run and no TypeScript to build it: run `npm ci` (with dev dependencies) first");
  process.exit(1);
}
