import type { CheckResult } from "../../connectors/sdk/testing.js";

/** `hermes connector-test MODULE [--options JSON]`: the conformance kit; prints a line per check and `N passed, N failed`. */
export async function connectorTest(args: string[], optionsJson: string | undefined): Promise<number> {
  const [module] = args;
  if (!module || args.length > 1) {
    process.stderr.write("usage: hermes connector-test MODULE [--options JSON]\n");
    return 2;
  }
  let options: Record<string, unknown> = {};
  try {
    options = optionsJson ? (JSON.parse(optionsJson) as Record<string, unknown>) : {};
    if (!options || typeof options !== "object" || Array.isArray(options)) throw new Error("expected a JSON object");
  } catch (err) {
    process.stderr.write(`hermes: --options: ${(err as Error).message}\n`);
    return 2;
  }
  const { runConformance } = await import("../../connectors/kit/run.js");
  const print = (r: CheckResult) => {
    const after = r.ok ? ` (${r.detail || `${r.ms} ms`})` : `\n    ${r.detail}`;
    process.stdout.write(`${r.ok ? "✓" : "✗"} ${r.name}${after}\n`);
  };
  const report = await runConformance(module, { options, onResult: print });
  process.stdout.write(`${report.passed} passed, ${report.failed} failed\n`);
  return report.failed ? 1 : 0;
}
