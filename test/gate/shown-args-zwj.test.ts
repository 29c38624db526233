/**
 * 7ff01bb shows an emoji's presentation selector as the emoji, but the zero-width joiner inside an emoji
 * ZWJ sequence ("❤️‍🔥", "👨‍👩‍👧", "🏳️‍🌈") is still shown as a code point: the same friendly messages stay
 * unreadable (and many of them too long to approve where they are read). A joiner used as padding still shows.
 */
import { describe, expect, it } from "vitest";
import { shownText, shownWhole } from "../../src/gate/shown-args.js";

describe("approval text with emoji ZWJ sequences", () => {
  it("shows a joiner between two emoji as part of the emoji", () => {
    expect(shownText("Happy pride 🏳️‍🌈 and love ❤️‍🔥 from 👨‍👩‍👧")).toBe("Happy pride 🏳️‍🌈 and love ❤️‍🔥 from 👨‍👩‍👧");
  });

  it("a message of 150 families can still be approved where it is read", () => {
    expect(shownWhole({ text: "👨‍👩‍👧".repeat(150) })).toBe(true); // 1,200 characters
  });

  it("still shows a joiner that is not between two emoji", () => {
    expect(shownText("rm\u200D -rf")).toBe("rm<U+200D> -rf");
    expect(shownText("❤\u200D\u200D🔥")).toBe("❤<U+200D><U+200D>🔥");
    expect(shownText("\u200D🔥")).toBe("<U+200D>🔥");
  });
});
