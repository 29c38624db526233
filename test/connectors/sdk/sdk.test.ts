import { describe, expect, it } from "vitest";

// Imported by the package's own name, as a plugin does: the `exports` map, not a path into the tree.
const sdk = await import("hermes/connector");

describe("hermes/connector", () => {
  it("exports the contract version and the helpers", () => {
    expect(sdk.CONNECTOR_API).toBe(1);
    const plugin = sdk.defineConnector({
      api: sdk.CONNECTOR_API,
      create: () => ({ start: async () => {}, stop: async () => {}, send: async () => ({ id: "1" }) }),
    });
    expect(plugin.api).toBe(1);
  });

  it("splits text under the limit, in order, losing nothing but the joins", () => {
    const text = Array.from({ length: 40 }, (_, i) => `line ${i} ${"x".repeat(i % 7)}`).join("\n");
    const parts = sdk.splitText(text, 50);
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(50);
    expect(parts.join("\n")).toBe(text);
  });

  it("names approval buttons so a press can be read back", () => {
    const ids = sdk.approvalButtonIds("ap1");
    expect(sdk.parseApprovalButton(ids.approve)).toEqual({ approve: true, approvalId: "ap1" });
    expect(sdk.parseApprovalButton(ids.deny)).toEqual({ approve: false, approvalId: "ap1" });
    expect(sdk.parseApprovalButton("something else")).toBeUndefined();
  });
});

describe("hermes/testing", () => {
  it("exports the kit runner", async () => {
    const testing = await import("hermes/testing");
    expect(typeof testing.runConformance).toBe("function");
  });
});
