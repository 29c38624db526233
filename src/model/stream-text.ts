/**
 * The text of one request as one stream, however many attempts it takes (a retry, another endpoint, a
 * smaller prompt). A listener cannot take back text it was given, so an attempt's text is passed on only
 * beyond what earlier attempts already showed, and only while the attempt repeats that text exactly. Once
 * an attempt says something else, nothing more is streamed for the request: the final reply carries the
 * true text (a chat message is edited to it, the OpenAI door appends it).
 */
export interface RequestText {
  /** The listener for the next attempt; an earlier attempt's listener is ignored from then on. */
  attempt(): ((delta: string) => void) | undefined;
}

export function requestText(onText: ((delta: string) => void) | undefined): RequestText {
  let shown = "";
  let diverged = false;
  let current = 0;
  return {
    attempt() {
      if (!onText) return undefined;
      const self = ++current;
      /** How much of this attempt's text has come so far. */
      let said = 0;
      return (delta) => {
        if (diverged || self !== current) return;
        // Only the part of the delta that overlaps the shown text is compared: each character once.
        const overlap = Math.min(delta.length, Math.max(0, shown.length - said));
        if (overlap > 0 && !shown.startsWith(delta.slice(0, overlap), said)) {
          diverged = true;
          return;
        }
        said += delta.length;
        const fresh = overlap > 0 ? delta.slice(overlap) : delta;
        if (!fresh) return;
        shown += fresh;
        onText(fresh);
      };
    },
  };
}
