import { once } from "node:events";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { Turns } from "../src/turns.js";

/** Holds the thread, as recording a message and building its prompt does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("turns of the event loop", () => {
  it("runs a burst in order, one piece per turn, and lets a network answer in between", async () => {
    const server = createServer((_req, res) => res.end("answer"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const turns = new Turns();
    const done: number[] = [];
    let doneWhenAnswered: number | undefined;
    const answered = new Promise<void>((resolve) => {
      request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, (res) => {
        res.resume();
        res.on("end", () => {
          doneWhenAnswered = done.length;
          resolve();
        });
      }).end();
    });
    const burst = Array.from({ length: 60 }, (_, i) =>
      turns.next().then(() => {
        busy(2);
        done.push(i);
      }),
    );
    await Promise.all([...burst, answered]);
    server.close();
    expect(done).toEqual(Array.from({ length: 60 }, (_, i) => i));
    // All sixty in one go would hold the thread for 120 ms and read the answer only after the last.
    expect(doneWhenAnswered).toBeLessThan(30);
  });

  it("lets a lone caller go at once, without waiting for a pass of the event loop", async () => {
    const turns = new Turns();
    const order: string[] = [];
    setImmediate(() => order.push("next pass"));
    await turns.next();
    order.push("lone caller");
    await new Promise((resolve) => setImmediate(resolve));
    await turns.next();
    order.push("a later lone caller");
    expect(order).toEqual(["lone caller", "next pass", "a later lone caller"]);
  });
});
