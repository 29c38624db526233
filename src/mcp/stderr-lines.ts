/**
 * An MCP server's stderr as log lines, bounded: a line is kept up to `maxLine` characters and the rest of it
 * is dropped as it arrives (never held whole in memory, however long it runs without a newline), and at most
 * `perMinute` lines a minute are logged; how many were left out is said once the minute is over.
 */
export interface StderrLimits {
  maxLine: number;
  perMinute: number;
  now?: () => number;
}

export function boundedLines(
  onLine: (line: string) => void,
  onDropped: (count: number) => void,
  limits: StderrLimits,
): (chunk: Buffer | string) => void {
  const now = limits.now ?? Date.now;
  let line = "";
  let windowStart = now();
  let logged = 0;
  let dropped = 0;
  const emit = () => {
    if (now() - windowStart >= 60_000) {
      if (dropped > 0) onDropped(dropped);
      windowStart = now();
      logged = 0;
      dropped = 0;
    }
    if (logged < limits.perMinute) {
      logged++;
      onLine(line);
    } else dropped++;
    line = "";
  };
  // A character of several bytes may be split between two chunks: decoded as one stream, it stays whole.
  const decoder = new TextDecoder();
  return (chunk) => {
    const parts = (typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true })).split("\n");
    parts.forEach((part, i) => {
      if (line.length < limits.maxLine) line += part.slice(0, limits.maxLine - line.length);
      if (i < parts.length - 1) emit();
    });
  };
}
