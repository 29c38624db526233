import { describe, expect, it } from "vitest";
import { parseButton } from "../../../connectors/chat/press.js";
import { approvalButtonIds } from "../../../connectors/sdk/buttons.js";

describe("approval buttons the chat core decides", () => {
  it("takes the SDK's ids and the a:<id> / d:<id> of messages sent before, and nothing else", () => {
    const ids = approvalButtonIds("ap_1");
    expect(parseButton(ids.approve)).toEqual({ approve: true, approvalId: "ap_1" });
    expect(parseButton(ids.deny)).toEqual({ approve: false, approvalId: "ap_1" });
    expect(parseButton("a:ap_2")).toEqual({ approve: true, approvalId: "ap_2" });
    expect(parseButton("d:ap_2")).toEqual({ approve: false, approvalId: "ap_2" });
    for (const other of ["a:", "x:ap_1", "approve", "", 42, undefined]) expect(parseButton(other)).toBeUndefined();
  });
});
