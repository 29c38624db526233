/** Terminal rendering for `hermes chat` and `hermes ask`: colours and spinners only on a TTY. */
import { shownText } from "../gate/shown-args.js";

export interface Style {
  dim(s: string): string;
  green(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  bold(s: string): string;
}

export function createStyle(tty: boolean): Style {
  const wrap = (open: number, close: number) => (s: string) => (tty ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return { dim: wrap(2, 22), green: wrap(32, 39), red: wrap(31, 39), yellow: wrap(33, 39), bold: wrap(1, 22) };
}

/** Arguments in one short line: `{"path":"a.txt"}` → `path=a.txt`. */
export function shortArgs(args: unknown, max = 60): string {
  if (args === null || typeof args !== "object") return "";
  const joined = Object.entries(args as Record<string, unknown>)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  const text = plainLine(joined);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Text from the model or a tool (a call's arguments, a web page's words in a result) on one line for a
 * terminal: an escape sequence in it would be run by the terminal (`ESC[8m` hides what follows, an approval's
 * question among it), so control and other invisible characters are shown as their code points, `<U+001B>`.
 */
export function plainLine(text: string): string {
  return shownText(text, Number.POSITIVE_INFINITY).replace(/\s+/g, " ");
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A one-line spinner on stderr; does nothing when stderr is not a TTY. */
export function createSpinner(stream: NodeJS.WriteStream) {
  let timer: NodeJS.Timeout | undefined;
  let frame = 0;
  const clear = () => stream.write("\r\u001b[2K");
  return {
    start(label: string) {
      if (!stream.isTTY || timer) return;
      timer = setInterval(() => {
        stream.write(`\r${FRAMES[frame++ % FRAMES.length]} ${label}`);
      }, 80);
    },
    stop() {
      if (!timer) return;
      clearInterval(timer);
      timer = undefined;
      clear();
    },
  };
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
