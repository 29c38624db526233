/**
 * An approval shows invisible characters as code points; an emoji's presentation selector (U+FE0F after "❤",
 * "1⃣") is part of the emoji, and showing it as a code point made friendly messages unreadable and too long to
 * approve where they are read. A selector used as padding is still shown.
 */
import { describe, expect, it } from "vitest";
import { shownArgs, shownText, shownWhole } from "../../src/gate/shown-args.js";

describe("approval text with emoji", () => {
  it("shows an emoji's presentation selector as the emoji, not as a code point", () => {
    // "❤️" and the keycap "1️⃣" are written with U+FE0F after a character that takes it.
    expect(shownText("Happy birthday ❤️ see you at 1️⃣")).toBe("Happy birthday ❤️ see you at 1️⃣");
    expect(shownArgs({ text: "☀️ today" })).toBe('{"text":"☀️ today"}');
  });

  it("a message of 300 hearts can still be approved where it is read", () => {
    expect(shownWhole({ text: "❤️".repeat(300) })).toBe(true); // 600 characters, shown as 2,700
  });

  it("still shows padding selectors: one after a letter, or a run after an emoji", () => {
    expect(shownText("ls\uFE0F")).toBe("ls<U+FE0F>");
    expect(shownText(`❤${"\uFE0F".repeat(3)}`)).toBe("❤\uFE0F<U+FE0F><U+FE0F>");
    expect(shownText("\uFE0Fx")).toBe("<U+FE0F>x");
  });
});
