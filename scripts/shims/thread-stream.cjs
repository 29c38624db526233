// Stands in for thread-stream in the bundle: pino needs it only for transports in worker threads,
// which hermes does not use (JSON to stdout; pretty on a terminal is an in-process stream, src/log.ts).
// Bundled, its worker file would not be found anyway, and worker_threads would load at every start.
module.exports = class ThreadStream {
  constructor() {
    throw new Error("pino transports are not part of the hermes bundle");
  }
};
