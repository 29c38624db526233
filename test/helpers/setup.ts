// Runs in every test file: the vitest worker may be ended without an "exit" event, so the daemons a
// file left running are killed when the file is done, and the temp dirs its daemons ran in removed.
import { afterAll } from "vitest";
import { cleanUpTestFile } from "./hermes.js";

afterAll(cleanUpTestFile);
