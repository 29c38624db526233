/**
 * A fake Telegram Bot API on 127.0.0.1: getMe, getUpdates (long polling with offsets), sendMessage,
 * editMessageText, editMessageReplyMarkup, answerCallbackQuery, sendChatAction, setMyCommands, getFile and
 * file downloads (`/file/bot<token>/<file_path>`) — with fault injection. grammY talks to it through `client.apiRoot`.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createChanges, waitForEntry } from "../helpers/wait.js";
import { readBody } from "./model-server.js";

export const BOT = { id: 999, is_bot: true, first_name: "hermes", username: "hermes_test_bot" };
export const TOKEN = "123456:TEST-token-for-the-fake-bot-api-000000";

export interface Call {
  method: string;
  params: Record<string, any>;
  /** What the fake answered (for sendMessage: the message with its id). */
  result?: any;
}

interface Fault {
  status: number;
  description: string;
  retryAfter?: number;
  times: number;
}

export interface FakeTelegram {
  apiRoot: string;
  calls: Call[];
  /** Every getUpdates offset the client sent (each acknowledges the updates below it). */
  offsets: number[];
  push(update: Record<string, any>): number;
  /** A text message from `userId` in a private chat (or in `chatId`). Returns the update id. */
  sendText(
    userId: number,
    text: string,
    options?: { chatId?: number; chatType?: string; entities?: unknown[]; replyTo?: unknown; topic?: number },
  ): number;
  /** A message from `userId` with other fields than text (voice, photo, document, sticker, caption…). */
  sendMessage(userId: number, fields: Record<string, unknown>, options?: { chatId?: number; chatType?: string }): number;
  /** Serves `bytes` for getFile and the download path; returns the file_id. */
  addFile(bytes: Buffer, name?: string): string;
  /** Download paths requested, in order. */
  downloads: string[];
  /** A button press by `userId` on message `messageId` in `chatId`. */
  press(userId: number, chatId: number, messageId: number, data: string): number;
  fail(method: string, fault: { status: number; description: string; retryAfter?: number }, times?: number): void;
  /** Every call for chat `chatId` (a send, an edit, a typing indicator) answers this error from now on. */
  refuseChat(chatId: number, fault: { status: number; description: string }): void;
  /** Serves the update `updateId` again at the next getUpdates whatever its offset, as after an acknowledgement that was lost. */
  redeliver(updateId: number): void;
  /** The next `n` getUpdates calls never answer. */
  hangGetUpdates(n: number): void;
  rejectHtml: boolean;
  /** `connectors.telegram` settings that point hermes at this fake, with a fast poll and no streaming. */
  settings(allowedUsers: (number | { id: number; name: string })[], extra?: Record<string, unknown>): Record<string, unknown>;
  /** The first call from index `from` on that matches; fails after `timeoutMs` (default WAIT_MS) saying which. */
  waitFor(predicate: (call: Call) => boolean, from?: number, timeoutMs?: number): Promise<Call>;
  messagesTo(chatId: number): Call[];
  close(): Promise<void>;
}

/** A fake Bot API on 127.0.0.1; `port` picks the port (to start it after the daemon that uses it). */
export async function startFakeTelegram(port = 0): Promise<FakeTelegram> {
  let nextUpdate = 1;
  let nextMessage = 100;
  const queue: Record<string, any>[] = [];
  const pushed = new Map<number, Record<string, any>>();
  const replays: Record<string, any>[] = [];
  const refusedChats = new Map<number, { status: number; description: string }>();
  const calls: Call[] = [];
  const offsets: number[] = [];
  const faults = new Map<string, Fault>();
  const pollers: (() => void)[] = [];
  const changes = createChanges();
  const sockets = new Set<Socket>();
  const files = new Map<string, { path: string; bytes: Buffer }>();
  const downloads: string[] = [];
  let hang = 0;

  const record = (call: Call) => {
    calls.push(call);
    changes.notify();
  };
  const wake = () => {
    for (const p of pollers.splice(0)) p();
  };
  const user = (id: number) => ({ id, is_bot: false, first_name: `user${id}`, username: `user${id}` });

  const fake: FakeTelegram = {
    apiRoot: "",
    calls,
    downloads,
    addFile(bytes, name = "file.bin") {
      const id = `file_${files.size + 1}`;
      files.set(id, { path: `documents/${id}_${name}`, bytes });
      return id;
    },
    sendMessage(userId, fields, o = {}) {
      const chatId = o.chatId ?? userId;
      const chat =
        o.chatType && o.chatType !== "private"
          ? { id: chatId, type: o.chatType, title: "group" }
          : { id: chatId, type: "private", first_name: `user${userId}` };
      return fake.push({
        message: { message_id: nextMessage++, date: Math.floor(Date.now() / 1000), chat, from: user(userId), ...fields },
      });
    },
    offsets,
    rejectHtml: false,
    settings: (allowedUsers, extra = {}) => ({
      enabled: true,
      token: TOKEN,
      allowed_users: allowedUsers,
      api_root: fake.apiRoot,
      poll_timeout_s: 1,
      stream_replies: false,
      ...extra,
    }),
    push(update) {
      const id = update.update_id ?? nextUpdate++;
      pushed.set(id, { ...update, update_id: id });
      queue.push({ ...update, update_id: id });
      wake();
      return id;
    },
    sendText(userId, text, o = {}) {
      const chatId = o.chatId ?? userId;
      const message = {
        message_id: nextMessage++,
        date: Math.floor(Date.now() / 1000),
        chat:
          o.chatType && o.chatType !== "private"
            ? { id: chatId, type: o.chatType, title: "group", ...(o.topic !== undefined && { is_forum: true }) }
            : { id: chatId, type: "private", first_name: `user${userId}` },
        ...(o.topic !== undefined && { is_topic_message: true, message_thread_id: o.topic }),
        from: user(userId),
        text,
        ...(o.entities ? { entities: o.entities } : {}),
        ...(o.replyTo ? { reply_to_message: o.replyTo } : {}),
      };
      return fake.push({ message });
    },
    press(userId, chatId, messageId, data) {
      return fake.push({
        callback_query: {
          id: `cq${nextUpdate}`,
          from: user(userId),
          chat_instance: "ci",
          data,
          message: { message_id: messageId, date: 0, chat: { id: chatId, type: "private", first_name: "x" }, text: "approval" },
        },
      });
    },
    fail(method, fault, times = 1) {
      faults.set(method, { ...fault, times });
    },
    refuseChat(chatId, fault) {
      refusedChats.set(chatId, fault);
    },
    redeliver(updateId) {
      const update = pushed.get(updateId);
      if (!update) throw new Error(`no update ${updateId} was pushed`);
      replays.push(update);
      wake();
    },
    hangGetUpdates(n) {
      hang = n;
    },
    waitFor: (predicate, from = 0, timeoutMs) => waitForEntry(calls, predicate, from, "Bot API call", changes, timeoutMs),
    messagesTo: (chatId) => calls.filter((c) => c.method === "sendMessage" && Number(c.params.chat_id) === chatId),
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, "close").catch(() => {});
    },
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const download = (req.url ?? "").match(/^\/file\/bot([^/]+)\/(.+)$/);
    if (download) return serveFile(download[1] as string, decodeURIComponent(download[2] as string), res);
    const match = (req.url ?? "").match(/^\/bot([^/]+)\/(\w+)/);
    if (!match) return reply(res, 404, { ok: false, error_code: 404, description: "Not Found" });
    if (match[1] !== TOKEN) return reply(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
    const method = match[2] as string;
    const params = JSON.parse((await readBody(req)) || "{}") as Record<string, any>;
    const refused = params.chat_id !== undefined ? refusedChats.get(Number(params.chat_id)) : undefined;
    if (refused) {
      record({ method: `${method}:fault`, params });
      return reply(res, refused.status, { ok: false, error_code: refused.status, description: refused.description });
    }
    const fault = faults.get(method);
    if (fault && fault.times > 0) {
      fault.times--;
      record({ method: `${method}:fault`, params });
      const parameters = fault.retryAfter !== undefined ? { retry_after: fault.retryAfter } : undefined;
      return reply(res, fault.status, { ok: false, error_code: fault.status, description: fault.description, parameters });
    }
    if (method === "getUpdates") return getUpdates(params, res);
    if ((method === "sendMessage" || method === "editMessageText") && fake.rejectHtml && params.parse_mode === "HTML") {
      record({ method: `${method}:rejected`, params });
      return reply(res, 400, { ok: false, error_code: 400, description: "Bad Request: can't parse entities: unsupported start tag" });
    }
    if ((method === "sendMessage" || method === "editMessageText") && String(params.text ?? "").length > 4096) {
      record({ method: `${method}:too_long`, params });
      return reply(res, 400, { ok: false, error_code: 400, description: "Bad Request: message is too long" });
    }
    const result = answer(method, params);
    if (method === "getFile" && result === undefined) {
      record({ method: "getFile:missing", params });
      return reply(res, 400, { ok: false, error_code: 400, description: "Bad Request: invalid file_id" });
    }
    record({ method, params, result });
    return reply(res, 200, { ok: true, result });
  }

  function answer(method: string, params: Record<string, any>): unknown {
    switch (method) {
      case "getMe":
        return { ...BOT, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false };
      case "sendMessage":
        return {
          message_id: nextMessage++,
          date: Math.floor(Date.now() / 1000),
          chat: { id: params.chat_id, type: "private" },
          text: params.text,
        };
      case "getFile": {
        const file = files.get(String(params.file_id));
        return file
          ? { file_id: params.file_id, file_unique_id: `u${params.file_id}`, file_size: file.bytes.length, file_path: file.path }
          : undefined;
      }
      case "editMessageText":
        return { message_id: params.message_id, date: 0, chat: { id: params.chat_id, type: "private" }, text: params.text };
      default:
        return true;
    }
  }

  /** The Bot API's download path: the token in the path, the file_path from getFile after it. */
  function serveFile(token: string, path: string, res: ServerResponse): void {
    downloads.push(path);
    if (token !== TOKEN) return void reply(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
    const file = [...files.values()].find((f) => f.path === path);
    if (!file) return void reply(res, 404, { ok: false, error_code: 404, description: "Not Found" });
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": file.bytes.length });
    res.end(file.bytes);
  }

  function getUpdates(params: Record<string, any>, res: ServerResponse): void {
    const offset = Number(params.offset ?? 0);
    offsets.push(offset);
    record({ method: "getUpdates", params });
    while (queue.length && (queue[0]?.update_id ?? 0) < offset) queue.shift();
    if (hang > 0) {
      hang--;
      return;
    }
    const respond = () => {
      const ready = [...replays.splice(0), ...queue.filter((u) => u.update_id >= offset)].slice(0, Number(params.limit ?? 100));
      reply(res, 200, { ok: true, result: ready });
    };
    if (replays.length || queue.some((u) => u.update_id >= offset)) {
      respond();
      return;
    }
    const timer = setTimeout(
      () => {
        pollers.splice(pollers.indexOf(wakeThis), 1);
        respond();
      },
      Number(params.timeout ?? 0) * 1000,
    );
    const wakeThis = () => {
      clearTimeout(timer);
      respond();
    };
    pollers.push(wakeThis);
    res.on("close", () => {
      clearTimeout(timer);
      const i = pollers.indexOf(wakeThis);
      if (i >= 0) pollers.splice(i, 1);
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  fake.apiRoot = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

function reply(res: ServerResponse, status: number, payload: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(payload));
}
