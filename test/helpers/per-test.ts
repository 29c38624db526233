import { afterEach } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import type { Hermes } from "./hermes.js";

export interface PerTest {
  hermes?: Hermes;
  model?: FakeModel;
}

/** A daemon and a fake model that a test may start; whichever it started is stopped after it. */
export function stoppedAfterEach(): PerTest {
  const held: PerTest = {};
  afterEach(async () => {
    await held.hermes?.stop();
    await held.model?.close();
    held.hermes = undefined;
    held.model = undefined;
  });
  return held;
}
