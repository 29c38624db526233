/**
 * The limit on failed logins: X-Forwarded-For is believed only from configured proxies, a cross-site form
 * cannot spend the owner's attempts, and the right token is never locked out.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { baseSettings, type Hermes, startHermes } from "../helpers/hermes.js";
import { baseUrlOf, bearer, HTTP_TOKEN, httpEnv, httpSettings } from "../helpers/http.js";

describe("the login limiter", () => {
  let model: FakeModel;
  let hermes: Hermes | undefined;
  let base = "";
  const start = async (extra: Record<string, unknown> = {}) => {
    hermes = await startHermes(
      { ...baseSettings(model.url), connectors: { cron: { enabled: false }, http: httpSettings([], extra) } },
      { env: httpEnv },
    );
    base = await baseUrlOf(hermes);
  };
  const login = (token: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams({ token }).toString(),
    }).then((r) => r.status);
  const api = (token: string, forwardedFor?: string) =>
    fetch(`${base}/v1/status`, { headers: { ...bearer(token), ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}) } }).then(
      (r) => r.status,
    );

  beforeEach(async () => {
    model = await startFakeModel();
  });
  afterEach(async () => {
    await hermes?.stop();
    hermes = undefined;
    await model.close();
  });

  it("ignores a rotating X-Forwarded-For from a peer that is not a configured proxy", async () => {
    await start();
    for (let i = 0; i < 30; i++) expect(await api("guess", `203.0.113.${i}`)).toBe(401);
    expect(await api("guess", "203.0.113.99")).toBe(429);
    expect(await api("guess")).toBe(429);
  });

  it("reads the client from a configured proxy's X-Forwarded-For, from the end, skipping trusted hops", async () => {
    await start({ trusted_proxies: ["127.0.0.1", "10.0.0.0/8"] });
    // The client wrote 198.51.100.1 itself; 10.1.1.1 is an inner proxy; 203.0.113.7 is what that proxy saw.
    for (let i = 0; i < 30; i++) expect(await api("guess", "198.51.100.1, 203.0.113.7, 10.1.1.1")).toBe(401);
    expect(await api("guess", `198.51.100.${Math.floor(Math.random() * 200) + 2}, 203.0.113.7, 10.1.1.1`)).toBe(429);
    expect(await api("guess", "203.0.113.8")).toBe(401);
  });

  it("refuses cross-site login posts without counting them, and lets the right token in while blocked", async () => {
    await start();
    for (let i = 0; i < 40; i++) expect(await login("guess", { "sec-fetch-site": "cross-site" })).toBe(403);
    expect(await login("guess", { "sec-fetch-site": "same-origin" })).toBe(401);
    for (let i = 0; i < 30; i++) await login("guess");
    expect(await login("guess", { "sec-fetch-site": "same-origin" })).toBe(429);
    expect(await login(HTTP_TOKEN, { "sec-fetch-site": "same-origin" })).toBe(303);
    expect(await api(HTTP_TOKEN)).toBe(200);
  });

  it("refuses a trusted_proxies entry that is not an address or a CIDR, naming the key", async () => {
    await expect(start({ trusted_proxies: ["proxy.lan"] })).rejects.toThrow(/trusted_proxies.*expected an IP address or a CIDR/s);
  });
});
