/** Cuts text longer than `max` keeping its head and tail, with a marker that says how much was cut. */
export function truncateResult(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (cut: number) => `\n[… ${cut} characters cut …]\n`;
  const room = Math.max(0, max - marker(text.length).length);
  const head = Math.ceil(room * 0.7);
  const tail = room - head;
  return text.slice(0, head) + marker(text.length - head - tail) + (tail > 0 ? text.slice(-tail) : "");
}

/** One line for logs, events and the audit trail. */
export function summarize(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
