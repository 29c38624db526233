/**
 * Dashboard logins are rows of the small key-value table: one ended by a logout was kept as an empty row,
 * and one past its 30 days stayed for ever, so the table grew by a row a login.
 */
import { describe, expect, it } from "vitest";
import { createSessions, SESSION_MAX_AGE_S } from "../../../connectors/http/auth.js";
import { openStore } from "../../../src/store/store.js";

describe("dashboard logins", () => {
  it("are removed at a logout, and those past their age when a new login is made", () => {
    const store = openStore(":memory:");
    const sessions = createSessions(store, () => "a-token-of-enough-length");
    const rows = () => store.db.prepare("SELECT key FROM kv WHERE key LIKE 'http:session:%'").pluck().all();
    const first = sessions.create();
    const second = sessions.create();
    expect(rows()).toHaveLength(2);
    sessions.end(first.id);
    expect(rows()).toHaveLength(1);
    expect(sessions.get(first.id)).toBeUndefined();
    store.inbound.setValue("http:sessionless", "kept"); // a neighbour whose key only starts alike
    // The second login (and the neighbour) are 31 days old when a third is made.
    store.db.prepare("UPDATE kv SET updated_at = ? WHERE key LIKE 'http:session%'").run(Date.now() - (SESSION_MAX_AGE_S + 86_400) * 1000);
    const third = sessions.create();
    expect(rows()).toHaveLength(1);
    expect(sessions.get(second.id)).toBeUndefined();
    expect(sessions.get(third.id)).toEqual(third.session);
    expect(store.inbound.value("http:sessionless")).toBe("kept");
    store.close();
  });
});
