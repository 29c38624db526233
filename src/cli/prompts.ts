import { createInterface } from "node:readline";

/**
 * Questions asked on a terminal or answered from a pipe (`printf '…' | hermes setup`). Every line typed or
 * piped is kept until a question takes it: readline's own `question` drops a line that arrives while no
 * question is open (piped answers are all there at once, and setup asks its next question only after a live
 * check), and never settles once the input has ended. Here a question asked after the last line has been
 * taken ends setup with an error that says what it needed.
 */
export interface Prompts {
  /** The next line, or undefined when the input has ended. */
  question(prompt: string): Promise<string | undefined>;
  close(): void;
}

export function createPrompts(input: NodeJS.ReadStream, output: NodeJS.WriteStream): Prompts {
  const rl = createInterface({ input, output, terminal: input.isTTY });
  const lines: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  let ended = false;
  rl.on("line", (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else lines.push(line);
  });
  rl.on("close", () => {
    ended = true;
    for (const next of waiting.splice(0)) next(undefined);
  });
  return {
    question(prompt) {
      // Once the input has ended the interface is closed, and Node 24 refuses to prompt on it.
      if (ended) output.write(prompt);
      else {
        rl.setPrompt(prompt);
        rl.prompt();
      }
      if (lines.length) return Promise.resolve(lines.shift());
      if (ended) return Promise.resolve(undefined);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () => rl.close(),
  };
}
