/**
 * A reader that stops reading early (`hermes export | head`) ends a command quietly, as it ends any Unix
 * tool, instead of with an "Unhandled 'error' event" trace and exit 1. process.stdout and process.stderr
 * are built on first use (`hermes ask` builds them late, see run-view.ts), so the handler is added then.
 */
export function endQuietlyOnClosedPipe(): void {
  for (const name of ["stdout", "stderr"] as const) {
    const own = Object.getOwnPropertyDescriptor(process, name);
    const build = own?.get;
    if (!own?.configurable || !build) continue;
    let handled = false;
    Object.defineProperty(process, name, {
      ...own,
      get() {
        const stream = build.call(process) as NodeJS.WriteStream;
        if (!handled) stream.on("error", onWriteError);
        handled = true;
        return stream;
      },
    });
  }
}

function onWriteError(err: NodeJS.ErrnoException): void {
  if (err.code === "EPIPE") process.exit();
  throw err;
}
