import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, type Hermes } from "../helpers/hermes.js";

// A certificate for 127.0.0.1 made for these tests only (openssl req -x509, P-256, valid for 100 years).
const TLS_DIR = join(import.meta.dirname, "../fixtures/tls");
const certPath = join(TLS_DIR, "cert.pem");
const tls = { key: readFileSync(join(TLS_DIR, "key.pem"), "utf8"), cert: readFileSync(certPath, "utf8") };

describe("a model endpoint over https", () => {
  let model: FakeModel | undefined;
  let hermes: Hermes | undefined;

  it("answers through TLS when the daemon trusts the endpoint's certificate", async () => {
    model = await useModel({ tls });
    model.respond(() => ({ text: "answered over TLS" }));
    hermes = await useHermes(baseSettings(model.url), { env: { NODE_EXTRA_CA_CERTS: certPath } });
    const asked = await hermes.ask("hello");
    expect(asked.stdout).toContain("answered over TLS");
    expect(model.requests.map((r) => r.path)).toEqual(["/api/chat"]);
  });

  it("refuses an endpoint whose certificate it does not trust, and says so", async () => {
    model = await useModel({ tls });
    model.respond(() => ({ text: "must not be shown" }));
    hermes = await useHermes(baseSettings(model.url), { env: { NODE_EXTRA_CA_CERTS: undefined } });
    const asked = await hermes.ask("hello");
    expect(asked.stdout + asked.stderr).not.toContain("must not be shown");
    expect(asked.stdout + asked.stderr).toContain("has a TLS certificate this machine does not trust (self-signed certificate");
    expect(asked.stdout + asked.stderr).toContain("NODE_EXTRA_CA_CERTS");
    expect(asked.stdout + asked.stderr).not.toContain("systemctl start ollama");
    expect(model.requests).toHaveLength(0);
    // `hermes doctor` gives the same fix, not "start Ollama".
    const doctor = await hermes.cli(["doctor", "--config", hermes.configPath], { env: { NODE_EXTRA_CA_CERTS: undefined } });
    expect(doctor.stdout).toContain("has a TLS certificate this machine does not trust");
    expect(doctor.stdout).toContain("NODE_EXTRA_CA_CERTS");
    expect(doctor.stdout).not.toContain("systemctl start ollama");
  });
});
