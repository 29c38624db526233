/** Talking to the HTTP connector of a daemon under test. */
import { createHmac } from "node:crypto";
import type { Hermes } from "./hermes.js";

export const HTTP_TOKEN = "test-http-token-0123456789abcdef";

/** `connectors.http` on a free port with the test token and the given hooks. */
export function httpSettings(hooks: Record<string, unknown>[] = [], extra: Record<string, unknown> = {}) {
  return { enabled: true, listen: "127.0.0.1:0", token: "${HERMES_HTTP_TOKEN}", hooks, ...extra };
}

export const httpEnv = { HERMES_HTTP_TOKEN: HTTP_TOKEN };

/** The base URL the daemon's HTTP connector listens on, from its start-up log line. */
export async function baseUrlOf(hermes: Hermes): Promise<string> {
  const line = await hermes.waitForLog((l) => l.msg === "http listening");
  return String(line.listen);
}

/** GitHub's webhook signature of a raw body. */
export function githubSignature(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export const bearer = (token = HTTP_TOKEN) => ({ authorization: `Bearer ${token}` });

/** Approves the first pending approval through the API's `/v1/approvals`; resolves the decision's HTTP status. */
export async function approveFirstPending(base: string): Promise<number> {
  const { approvals } = (await (await fetch(`${base}/v1/approvals`, { headers: bearer() })).json()) as { approvals: { id: string }[] };
  const decided = await fetch(`${base}/v1/approvals/${approvals[0]?.id}`, {
    method: "POST",
    headers: { ...bearer(), "content-type": "application/json" },
    body: JSON.stringify({ approve: true }),
  });
  return decided.status;
}

/** Reads an SSE response into its events (`event:` name and parsed `data:`). */
export async function readSse(res: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
      const data = block
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}
