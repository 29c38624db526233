/**
 * A Markdown link whose address holds `__`, `**`, `*…*` or `~~` (a Python docs anchor `#object.__init__`, a
 * Wayback Machine wildcard) had bold/italic/strike tags written into its href: the link led to a wrong address
 * (`…#object.<b>init</b>`), or the tags crossed the <a> and Telegram rejected the message's HTML.
 */
import { describe, expect, it } from "vitest";
import { formatReply, inlineToHtml } from "../../../connectors/telegram/format.js";

describe("a link in a Telegram reply", () => {
  it("keeps its address as written, whatever emphasis markers it holds", () => {
    const docs = "https://docs.python.org/3/reference/datamodel.html#object.__init__";
    expect(inlineToHtml(`See [the docs](${docs}).`)).toBe(`See <a href="${docs}">the docs</a>.`);
    const archive = "https://web.archive.org/web/*/example.com/*";
    expect(inlineToHtml(`[archived copies](${archive})`)).toBe(`<a href="${archive}">archived copies</a>`);
    const strike = "https://example.com/a~~b~~c";
    expect(formatReply(`[x](${strike})`)[0]?.html).toBe(`<a href="${strike}">x</a>`);
  });

  it("still formats its label and the text around it", () => {
    expect(inlineToHtml("**Read** [the *guide*](https://example.com/a__b__c) _now_")).toBe(
      '<b>Read</b> <a href="https://example.com/a__b__c">the <i>guide</i></a> <i>now</i>',
    );
  });
});

/**
 * A `*` with spaces on both sides is a times sign, not emphasis (as in CommonMark): "2 * 3 = 6 and 4 * 5 = 20"
 * came out as "2 <i> 3 = 6 and 4 </i> 5 = 20", both signs gone and the sum in italics.
 */
describe("asterisks in a Telegram reply", () => {
  it("keeps a times sign between spaces, and still reads *word* as italic", () => {
    expect(inlineToHtml("2 * 3 = 6 and 4 * 5 = 20")).toBe("2 * 3 = 6 and 4 * 5 = 20");
    expect(inlineToHtml("a *really* good idea, 3 * 4 = 12")).toBe("a <i>really</i> good idea, 3 * 4 = 12");
  });
});
