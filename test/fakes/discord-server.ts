/**
 * A fake Discord on 127.0.0.1: the REST API under /api/v10 (gateway/bot, messages, typing, DMs,
 * interaction callbacks, application commands) and a `ws` gateway on the same port (HELLO, IDENTIFY →
 * READY + GUILD_CREATE, heartbeats, RESUME, dispatches). discord.js talks to it through `rest.api`;
 * the gateway URL comes from `GET /gateway/bot`, as with the real one.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { createChanges, waitForEntry } from "../helpers/wait.js";
import { readBody } from "./model-server.js";

export const DISCORD_TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.fake-discord.bot-token-used-only-by-the-tests-00000";
export const BOT_USER = {
  id: "1100000000000000001",
  username: "hermes",
  discriminator: "0",
  global_name: "hermes",
  avatar: null,
  bot: true,
};
export const GUILD = "1100000000000000100";
export const GUILD_CHANNEL = "1100000000000000101";

/** A text channel of the fake guild, as the API and gateway describe it. */
const guildChannel = (id: string) => ({
  id,
  type: 0,
  guild_id: GUILD,
  name: "general",
  position: 0,
  permission_overwrites: [],
  nsfw: false,
  parent_id: null,
});
const MESSAGE_CONTENT_INTENT = 1 << 15;

export interface DiscordCall {
  /**
   * `POST /channels/1/messages`, `callback` (an interaction's first answer), `edit original` (a deferred one's
   * answer), or a gateway opcode name (`IDENTIFY`, `RESUME`, `HEARTBEAT`).
   */
  method: string;
  path: string;
  body: any;
  /** What the fake answered (for a sent message: the message with its id). */
  result?: any;
  /** performance.now() when the call arrived. */
  at: number;
}

export interface FakeDiscord {
  apiRoot: string;
  calls: DiscordCall[];
  /** Close IDENTIFY with 4014, as Discord does when the Message Content intent is not enabled. */
  disallowMessageContent: boolean;
  /** A DM from `userId`; returns the message id. */
  dm(userId: string, text: string): string;
  /** A DM with attachments served by this fake at `/attachments/<id>/<name>` (Discord's CDN needs no token). */
  dmWithFiles(
    userId: string,
    text: string,
    files: {
      name: string;
      contentType: string;
      bytes: Buffer;
      /** The size the message reports, when it differs from the bytes served. */
      size?: number;
      width?: number;
      height?: number;
      durationSecs?: number;
    }[],
  ): string;
  /** A DM with other fields (stickers, a poll…) merged into the message. */
  dmWith(userId: string, fields: Record<string, unknown>): string;
  /** Attachment paths downloaded, in order. */
  attachmentDownloads: string[];
  /** Attachment paths whose download the client closed before the whole file was sent. */
  attachmentsCutShort: string[];
  /** A message in the guild channel; `mention` puts the bot in it the way Discord does (`<@id>`). */
  say(userId: string, text: string, options?: { mention?: boolean }): string;
  /** Dispatches a message again, as a gateway replay after a resume may. */
  redeliver(messageId: string): void;
  /** A button click by `userId` on the message `message` (a sent message as the fake recorded it). */
  click(userId: string, message: any, customId: string): string;
  /** A slash command by `userId` in `channelId`. */
  slash(userId: string, channelId: string, name: string, options?: { name: string; type: number; value: string }[]): string;
  dmChannelOf(userId: string): string;
  /** Drops every gateway connection without a close frame (a dead network). */
  dropConnections(): void;
  /** The next `times` REST requests whose `METHOD path` matches answer `status`. */
  fail(match: RegExp, status: number, times?: number, retryAfter?: number): void;
  /** `connectors.discord` settings that point hermes at this fake, without streaming unless `extra` turns it on. */
  settings(allowedUsers: (string | { id: string; name: string })[], extra?: Record<string, unknown>): Record<string, unknown>;
  /** The first call from index `from` on that matches; fails after `timeoutMs` (default WAIT_MS) saying which. */
  waitFor(predicate: (call: DiscordCall) => boolean, from?: number, timeoutMs?: number): Promise<DiscordCall>;
  /** Messages the bot sent into a channel, in order. */
  messagesIn(channelId: string): DiscordCall[];
  close(): Promise<void>;
}

export async function startFakeDiscord(): Promise<FakeDiscord> {
  let nextId = 1300000000000000000n;
  const snowflake = () => String(nextId++);
  const calls: DiscordCall[] = [];
  const changes = createChanges();
  const faults: { match: RegExp; status: number; times: number; retryAfter?: number }[] = [];
  const sockets = new Set<Socket>();
  const sessions = new Map<WebSocket, { seq: number; ready: boolean }>();
  const messages = new Map<string, any>();
  const received = new Map<string, any>();
  let wsUrl = "";

  const record = (fields: Omit<DiscordCall, "at">) => {
    const call = { ...fields, at: performance.now() };
    calls.push(call);
    changes.notify();
  };
  const user = (id: string) => ({ id, username: `user${id.slice(-4)}`, discriminator: "0", global_name: null, avatar: null });
  const member = (id: string) => ({ roles: [], joined_at: new Date(0).toISOString(), deaf: false, mute: false, flags: 0, user: user(id) });
  const dmChannelOf = (userId: string) => `3${userId.slice(1)}`;
  const message = (fields: Record<string, unknown>) => ({
    id: snowflake(),
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    type: 0,
    flags: 0,
    components: [],
    ...fields,
  });

  const send = (ws: WebSocket, payload: Record<string, unknown>) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(payload));
  };
  const dispatch = (t: string, d: unknown) => {
    for (const [ws, session] of sessions) if (session.ready) send(ws, { op: 0, t, s: ++session.seq, d });
  };

  const attachments = new Map<string, Buffer>();
  const fake: FakeDiscord = {
    apiRoot: "",
    calls,
    attachmentDownloads: [],
    attachmentsCutShort: [],
    dmWith(userId, fields) {
      const m = message({ channel_id: dmChannelOf(userId), author: user(userId), content: "", channel_type: 1, ...fields });
      received.set(m.id, m);
      dispatch("MESSAGE_CREATE", m);
      return m.id;
    },
    dmWithFiles(userId, text, files) {
      const list = files.map((f) => {
        const id = snowflake();
        const path = `/attachments/${id}/${f.name}`;
        attachments.set(path, f.bytes);
        const url = `${fake.apiRoot.replace(/\/api$/, "")}${path}`;
        return {
          id,
          filename: f.name,
          content_type: f.contentType,
          size: f.size ?? f.bytes.length,
          url,
          proxy_url: url,
          ...(f.width !== undefined && { width: f.width, height: f.height }),
          ...(f.durationSecs !== undefined && { duration_secs: f.durationSecs }),
        };
      });
      const m = message({ channel_id: dmChannelOf(userId), author: user(userId), content: text, channel_type: 1, attachments: list });
      received.set(m.id, m);
      dispatch("MESSAGE_CREATE", m);
      return m.id;
    },
    disallowMessageContent: false,
    dm(userId, text) {
      const m = message({ channel_id: dmChannelOf(userId), author: user(userId), content: text, channel_type: 1 });
      received.set(m.id, m);
      dispatch("MESSAGE_CREATE", m);
      return m.id;
    },
    redeliver(messageId) {
      dispatch("MESSAGE_CREATE", received.get(messageId));
    },
    say(userId, text, o = {}) {
      const content = o.mention ? `<@${BOT_USER.id}> ${text}` : text;
      const m = message({
        channel_id: GUILD_CHANNEL,
        guild_id: GUILD,
        author: user(userId),
        member: { ...member(userId), user: undefined },
        content,
        mentions: o.mention ? [{ ...BOT_USER, member: { ...member(BOT_USER.id), user: undefined } }] : [],
        channel_type: 0,
      });
      received.set(m.id, m);
      dispatch("MESSAGE_CREATE", m);
      return m.id;
    },
    click(userId, sent, customId) {
      const inDm = sent.channel_id !== GUILD_CHANNEL;
      const id = snowflake();
      dispatch("INTERACTION_CREATE", {
        ...interactionBase(id, userId, sent.channel_id, inDm),
        type: 3,
        data: { custom_id: customId, component_type: 2 },
        message: sent,
      });
      return id;
    },
    slash(userId, channelId, name, options) {
      const id = snowflake();
      dispatch("INTERACTION_CREATE", {
        ...interactionBase(id, userId, channelId, channelId !== GUILD_CHANNEL),
        type: 2,
        data: { id: "1400000000000000001", name, type: 1, ...(options && { options }) },
      });
      return id;
    },
    dmChannelOf,
    dropConnections() {
      for (const ws of sessions.keys()) ws.terminate();
    },
    fail(match, status, times = 1, retryAfter) {
      faults.push({ match, status, times, retryAfter });
    },
    settings: (allowedUsers, extra = {}) => ({
      enabled: true,
      token: DISCORD_TOKEN,
      allowed_users: allowedUsers,
      api_root: fake.apiRoot,
      stream_replies: false,
      ...extra,
    }),
    waitFor: (predicate, from = 0, timeoutMs) => waitForEntry(calls, predicate, from, "Discord call", changes, timeoutMs),
    messagesIn: (channelId) => calls.filter((c) => c.method === `POST /channels/${channelId}/messages`),
    close: async () => {
      for (const ws of sessions.keys()) ws.terminate();
      wss.close();
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, "close").catch(() => {});
    },
  };

  function interactionBase(id: string, userId: string, channelId: string, inDm: boolean) {
    return {
      id,
      application_id: BOT_USER.id,
      token: `interaction-token-${id}`,
      version: 1,
      channel_id: channelId,
      channel: inDm ? { id: channelId, type: 1, last_message_id: null, flags: 0, recipients: [user(userId)] } : guildChannel(channelId),
      ...(inDm ? { user: user(userId), context: 1 } : { guild_id: GUILD, member: { ...member(userId), permissions: "0" }, context: 0 }),
      locale: "en-US",
      guild_locale: "en-US",
      app_permissions: "0",
      entitlements: [],
      authorizing_integration_owners: {},
      attachment_size_limit: 8388608,
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "").split("?")[0]?.replace(/^\/api\/v10/, "") ?? "";
    const file = attachments.get(decodeURIComponent(path));
    if (req.method === "GET" && path.startsWith("/attachments/")) {
      fake.attachmentDownloads.push(path);
      if (!file) return reply(res, 404, { message: "404: Not Found", code: 0 });
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": file.length });
      return serveInPieces(res, file, () => {
        fake.attachmentsCutShort.push(path);
        changes.notify();
      });
    }
    const method = `${req.method} ${path}`;
    const raw = await readBody(req);
    const body = raw ? JSON.parse(raw) : undefined;
    const fault = faults.find((f) => f.times > 0 && f.match.test(method));
    if (fault) {
      fault.times--;
      record({ method: `${method}:fault`, path, body });
      const headers: Record<string, string> = fault.retryAfter !== undefined ? { "retry-after": String(fault.retryAfter) } : {};
      return reply(res, fault.status, { message: `fault ${fault.status}`, code: 0, retry_after: fault.retryAfter, global: false }, headers);
    }
    const callback = path.match(/^\/interactions\/(\d+)\/([^/]+)\/callback$/);
    if (callback && req.method === "POST") {
      record({ method: "callback", path, body });
      res.writeHead(204).end();
      return;
    }
    // A deferred interaction's answer edits its original response, with the interaction's token for all authority.
    const original = path.match(/^\/webhooks\/(\d+)\/([^/]+)\/messages\/(?:@|%40)original$/);
    if (original && req.method === "PATCH") {
      const m = message({ channel_id: "0", author: BOT_USER, content: body.content ?? "" });
      record({ method: "edit original", path, body, result: m });
      return reply(res, 200, m);
    }
    if (req.headers.authorization !== `Bot ${DISCORD_TOKEN}`) {
      record({ method: `${method}:unauthorized`, path, body });
      return reply(res, 401, { message: "401: Unauthorized", code: 0 });
    }
    const result = answer(req.method ?? "GET", path, body);
    if (result === undefined) {
      record({ method: `${method}:unknown`, path, body });
      return reply(res, 404, { message: "404: Not Found", code: 0 });
    }
    record({ method, path, body, result });
    if (result === null) res.writeHead(204).end();
    else reply(res, 200, result);
  }

  function answer(verb: string, path: string, body: any): unknown {
    if (verb === "GET" && path === "/users/@me") return { ...BOT_USER, bot: true };
    if (verb === "GET" && path === "/gateway/bot") {
      return { url: wsUrl, shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 } };
    }
    const sendTo = path.match(/^\/channels\/(\d+)\/messages$/);
    if (verb === "POST" && sendTo) {
      const m = message({ channel_id: sendTo[1], author: BOT_USER, content: body.content ?? "", components: body.components ?? [] });
      messages.set(m.id, m);
      return m;
    }
    const edit = path.match(/^\/channels\/(\d+)\/messages\/(\d+)$/);
    if (verb === "PATCH" && edit) {
      const m = { ...(messages.get(edit[2] as string) ?? message({ id: edit[2], channel_id: edit[1], author: BOT_USER })), ...body };
      messages.set(m.id, m);
      return m;
    }
    if (verb === "POST" && /^\/channels\/\d+\/typing$/.test(path)) return null;
    if (verb === "POST" && path === "/users/@me/channels") {
      return { id: dmChannelOf(body.recipient_id), type: 1, last_message_id: null, flags: 0, recipients: [user(body.recipient_id)] };
    }
    if (verb === "PUT" && /^\/applications\/\d+\/commands$/.test(path)) {
      return (body as any[]).map((c, i) => ({
        id: String(1400000000000000001n + BigInt(i)),
        application_id: BOT_USER.id,
        version: "1",
        type: 1,
        ...c,
      }));
    }
    return undefined;
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const wss = new WebSocketServer({ server });
  wss.on("connection", (ws) => {
    const session = { seq: 0, ready: false };
    sessions.set(ws, session);
    ws.on("close", () => sessions.delete(ws));
    ws.on("error", () => ws.terminate());
    send(ws, { op: 10, d: { heartbeat_interval: 41250 } });
    ws.on("message", (data) => {
      const payload = JSON.parse(String(data)) as { op: number; d: any };
      if (payload.op === 1) {
        record({ method: "HEARTBEAT", path: "gateway", body: payload.d });
        return send(ws, { op: 11 });
      }
      if (payload.op === 2) {
        record({ method: "IDENTIFY", path: "gateway", body: { ...payload.d, token: "(hidden)" } });
        if (payload.d.token !== DISCORD_TOKEN) return ws.close(4004, "Authentication failed.");
        if (fake.disallowMessageContent && payload.d.intents & MESSAGE_CONTENT_INTENT) return ws.close(4014, "Disallowed intent(s).");
        session.ready = true;
        send(ws, {
          op: 0,
          t: "READY",
          s: ++session.seq,
          d: {
            v: 10,
            user: BOT_USER,
            guilds: [{ id: GUILD, unavailable: true }],
            session_id: `session-${snowflake()}`,
            resume_gateway_url: wsUrl,
            shard: [0, 1],
            application: { id: BOT_USER.id, flags: 0 },
            private_channels: [],
            relationships: [],
          },
        });
        send(ws, { op: 0, t: "GUILD_CREATE", s: ++session.seq, d: guildCreate() });
        return;
      }
      if (payload.op === 6) {
        record({ method: "RESUME", path: "gateway", body: { ...payload.d, token: "(hidden)" } });
        session.ready = true;
        session.seq = Number(payload.d.seq ?? 0);
        send(ws, { op: 0, t: "RESUMED", s: ++session.seq, d: {} });
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  fake.apiRoot = `http://127.0.0.1:${port}/api`;
  wsUrl = `ws://127.0.0.1:${port}`;
  return fake;
}

function guildCreate() {
  return {
    id: GUILD,
    name: "home",
    icon: null,
    owner_id: "2000000000000000042",
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    roles: [
      { id: GUILD, name: "@everyone", permissions: "0", position: 0, color: 0, hoist: false, managed: false, mentionable: false, flags: 0 },
    ],
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    preferred_locale: "en-US",
    public_updates_channel_id: null,
    nsfw_level: 0,
    premium_progress_bar_enabled: false,
    joined_at: new Date(0).toISOString(),
    large: false,
    unavailable: false,
    member_count: 2,
    voice_states: [],
    members: [],
    channels: [{ ...guildChannel(GUILD_CHANNEL), topic: null }],
    threads: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/**
 * Writes `file` a piece at a time, the next only once the client has taken the last (as a CDN does): a client
 * that stops reading and closes gets only part of it, and `cutShort` is called.
 */
async function serveInPieces(res: ServerResponse, file: Buffer, cutShort: () => void): Promise<void> {
  const closed = once(res, "close").catch(() => {});
  for (let at = 0; at < file.length; at += 65_536) {
    if (res.destroyed) return cutShort();
    if (!res.write(file.subarray(at, at + 65_536))) await Promise.race([once(res, "drain"), closed]);
  }
  if (res.destroyed) return cutShort();
  res.end();
}

function reply(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(payload));
}
