// The throughput floor: a bare node:http client in its own process, sending the request bodies hermes
// sent, one after another, to the same fake model, reading each streamed answer to its end. What it
// takes over 500 × 20 ms is this machine's loopback and wake-up latency, not hermes.
// Usage: node bare-client.js <url> <file with one JSON request body per line>
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";

const [url = "", file = ""] = process.argv.slice(2);
const bodies = readFileSync(file, "utf8").split("\n").filter(Boolean);
const agent = new Agent({ keepAlive: true });

function post(body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.on("data", () => {});
        res.on("end", resolve);
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const t = performance.now();
for (const body of bodies) await post(body);
process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - t) / 1000, calls: bodies.length })}\n`);
agent.destroy();
