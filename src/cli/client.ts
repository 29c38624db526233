import { createConnection, type Socket } from "node:net";
import { MAX_LINE_BYTES, type Reply, type Request } from "../../connectors/cli/protocol.js";

type Outgoing = Request extends infer R ? (R extends { v: 1; id: string } ? Omit<R, "v" | "id"> : never) : never;

/** A request over the socket's line limit: not sent (the daemon would refuse it before reading its id). */
export class MessageTooLong extends Error {
  constructor(bytes: number) {
    super(`the message is too long: ${bytes} bytes as sent, at most ${MAX_LINE_BYTES} (save a long text to a file and ask about it)`);
  }
}

export class DaemonUnreachable extends Error {
  constructor(
    readonly socketPath: string,
    readonly code: string,
    /** A line more, after how to start it. */
    note?: string,
  ) {
    super(
      `hermes is not running (cannot connect to ${socketPath}: ${code}).\nStart it with \`hermes start\` (foreground) or \`systemctl start hermes\`.${note ? `\n${note}` : ""}`,
    );
  }
}

/**
 * The socket is there but this user may not open it (EACCES/EPERM): the daemon runs as another user (the
 * service's socket is 0600 in a 0700 directory). Not "not running": starting a second daemon would not help.
 */
export class DaemonForbidden extends Error {
  constructor(
    readonly socketPath: string,
    readonly code: string,
  ) {
    super(
      `the hermes socket ${socketPath} exists, but this user may not open it (${code}).\nRun the command as the service's user (\`sudo -u hermes hermes …\`) or with sudo.`,
    );
  }
}

/** A connection to the daemon's socket; replies are routed to the request that caused them by id. */
export class Client {
  private buffer = "";
  private nextId = 1;
  private readonly handlers = new Map<string, (reply: Reply) => void>();
  private closed = false;
  private onClose: (() => void)[] = [];

  private constructor(private readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => this.receive(chunk));
    socket.on("close", () => {
      this.closed = true;
      for (const f of this.onClose) f();
    });
    socket.on("error", () => {});
  }

  static connect(path: string): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      socket.once("connect", () => resolve(new Client(socket)));
      socket.once("error", (err: NodeJS.ErrnoException) => {
        const code = err.code ?? err.message;
        reject(code === "EACCES" || code === "EPERM" ? new DaemonForbidden(path, code) : new DaemonUnreachable(path, code));
      });
    });
  }

  /**
   * Sends a request; `onReply` gets every reply line for it until it returns true (finished). It is
   * called from the socket's data events, never before `stream` has returned.
   */
  stream(request: Outgoing, onReply: (reply: Reply) => boolean | undefined): Promise<void> {
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error("the daemon closed the connection"));
      const onClose = () => reject(new Error("the daemon closed the connection"));
      this.onClose.push(onClose);
      this.handlers.set(id, (reply) => {
        if (!onReply(reply) && reply.type !== "error") return;
        this.handlers.delete(id);
        this.onClose = this.onClose.filter((f) => f !== onClose);
        resolve();
      });
      const line = `${JSON.stringify({ v: 1, id, ...request })}\n`;
      const bytes = Buffer.byteLength(line) - 1;
      if (bytes > MAX_LINE_BYTES) {
        // The daemon would refuse the line before it has an id to answer to: say so here, without sending it.
        this.handlers.delete(id);
        this.onClose = this.onClose.filter((f) => f !== onClose);
        return reject(new MessageTooLong(bytes));
      }
      this.socket.write(line);
    });
  }

  /** One request, one reply. */
  async call(request: Outgoing): Promise<Reply> {
    let last: Reply | undefined;
    await this.stream(request, (reply) => {
      last = reply;
      return true;
    });
    return last as Reply;
  }

  /** Ends the conversation; the process need not wait for the daemon to close its side. */
  close(): void {
    this.socket.end();
    this.socket.unref();
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    for (let nl = this.buffer.indexOf("\n"); nl >= 0; nl = this.buffer.indexOf("\n")) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      let reply: Reply;
      try {
        reply = JSON.parse(line) as Reply;
      } catch {
        continue;
      }
      // JSON that is not a reply object (`null`, a number) is skipped like any other line that is not a reply.
      if (reply === null || typeof reply !== "object" || typeof reply.id !== "string") continue;
      this.handlers.get(reply.id)?.(reply);
    }
  }
}

/** A successful result's data; an error reply (or a failed result) becomes an Error with the daemon's words. */
export function resultData(reply: Reply): unknown {
  if (reply.type === "result" && reply.ok) return reply.data;
  throw new Error(reply.type === "error" ? reply.error.message : "unexpected reply from the daemon");
}
