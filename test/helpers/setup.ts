// Runs in every test file: the vitest worker may be ended without an "exit" event, so the daemons a
// file left running are killed when the file is done.
import { afterAll } from "vitest";
import { killLeftoverDaemons } from "./hermes.js";

afterAll(killLeftoverDaemons);
