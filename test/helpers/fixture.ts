/**
 * What a test starts, stopped always: each `use*` starts one thing for the running test (call it in the
 * test or in a `beforeEach`) and registers its stop with `onTestFinished`, which runs in reverse order
 * (the daemon stops before the fakes it talks to close) and also after a failed assertion.
 */
import { onTestFinished } from "vitest";
import type { AnyTool } from "../../src/tools/types.js";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord-server.js";
import { type FakeMcpHttp, startFakeMcpHttp } from "../fakes/mcp-http-server.js";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { type NotifySocket, startNotifySocket } from "../fakes/notify-socket.js";
import { type FakeSpeech, startFakeSpeech } from "../fakes/speech-server.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram-server.js";
import { createTempDir, type Hermes, removeMadeDirs, startHermes } from "./hermes.js";

export { type WaitOptions, waitFor } from "./wait.js";

/** A fake model (Ollama native and OpenAI) for this test. */
export async function useModel(options?: Parameters<typeof startFakeModel>[0]): Promise<FakeModel> {
  const model = await startFakeModel(options);
  onTestFinished(() => model.close());
  return model;
}

/** A fake Telegram Bot API for this test; `port` to start it again where the daemon expects it. */
export async function useTelegram(port?: number): Promise<FakeTelegram> {
  const telegram = await startFakeTelegram(port);
  onTestFinished(() => telegram.close());
  return telegram;
}

/** A fake Discord (REST and gateway) for this test. */
export async function useDiscord(): Promise<FakeDiscord> {
  const discord = await startFakeDiscord();
  onTestFinished(() => discord.close());
  return discord;
}

/** A fake speech-to-text server (OpenAI transcriptions) for this test. */
export async function useSpeech(): Promise<FakeSpeech> {
  const speech = await startFakeSpeech();
  onTestFinished(() => speech.close());
  return speech;
}

/** A fake MCP server over HTTP for this test. */
export async function useMcpHttp(options: Parameters<typeof startFakeMcpHttp>[0]): Promise<FakeMcpHttp> {
  const server = await startFakeMcpHttp(options);
  onTestFinished(() => server.close());
  return server;
}

/** A fake systemd notify socket in `dir` for this test (pass its path as NOTIFY_SOCKET). */
export async function useNotifySocket(dir: string): Promise<NotifySocket> {
  const notify = await startNotifySocket(dir);
  onTestFinished(() => notify.close());
  return notify;
}

/** A temp dir for this test, removed when it finishes. */
export function useTempDir(prefix?: string): string {
  const dir = createTempDir(prefix);
  onTestFinished(dir.cleanup);
  return dir.path;
}

/**
 * The real daemon for this test: stopped when the test finishes (and so are the daemons its `restart`
 * starts), then the temp dir it made is removed.
 */
export async function useHermes(settings: Record<string, unknown>, options: Parameters<typeof startHermes>[1] = {}): Promise<Hermes> {
  const hermes = await startHermes(settings, options);
  if (options.dir === undefined) onTestFinished(() => removeMadeDirs(hermes.dir));
  return held(hermes);
}

function held(hermes: Hermes): Hermes {
  onTestFinished(async () => {
    if (hermes.process.exitCode === null && hermes.process.signalCode === null) await hermes.stop();
  });
  const restart = hermes.restart;
  hermes.restart = async () => held(await restart());
  return hermes;
}

/** The daemon inside the test process (for instrumented tools), closed when the test finishes. */
export async function useInProcess(settings: Record<string, unknown>, extraTools: AnyTool[] = []) {
  // Loaded here, not at the top: most tests spawn the built daemon and need none of its modules in-process.
  const { startInProcess } = await import("./in-process.js");
  const hermes = await startInProcess(settings, extraTools);
  onTestFinished(() => hermes.close());
  return hermes;
}
