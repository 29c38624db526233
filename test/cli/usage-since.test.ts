/**
 * `hermes usage --since` a date that does not exist (2026-13-45, 2026-02-30, 24:00) rolled it over into
 * another day and answered for that one, exit 0: "no model calls since 2026-13-45". It is a usage error.
 */
import { describe, expect, it } from "vitest";
import { Client } from "../../src/cli/client.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";

describe("hermes usage --since a date that does not exist", () => {
  it("is a usage error on the command line and a bad request on the socket", async () => {
    const hermes = await useHermes(baseSettings((await useModel()).url));
    for (const since of ["2026-13-45", "2026-02-30", "2026-11-01 24:00", "2026-11-01 08:60"]) {
      const run = await hermes.cli(["usage", "--since", since]);
      expect({ since, code: run.code, stdout: run.stdout }).toEqual({ since, code: 2, stdout: "" });
      expect(run.stderr).toContain(`not '${since}'`);
    }
    expect((await hermes.cli(["usage", "--since", "2028-02-29 23:59"])).code).toBe(0);
    const client = await Client.connect(hermes.socketPath);
    try {
      const reply = await client.call({ op: "usage", since: "2026-02-30" });
      expect(reply).toMatchObject({ type: "error", error: { code: "bad_request" } });
    } finally {
      client.close();
    }
  }, 60_000);
});
