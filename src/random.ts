import { closeSync, openSync, readSync } from "node:fs";

/**
 * Random ids without node:crypto. The daemon needs random bytes for the ids of runs, calls, approvals and
 * stored media, and nothing else of node:crypto unless the HTTP door is used; loading it sets up OpenSSL,
 * 2.5 MB of an idle daemon's memory on Node 24 (0.7 MB on Node 20).
 */

const POOL_BYTES = 4096;
let pool: Buffer = Buffer.alloc(0);
let offset = 0;

/**
 * `n` bytes from the kernel's random source (/dev/urandom, as OpenSSL reads it), drawn from a pool
 * refilled 4 KiB at a time; where that device cannot be read, from node:crypto.
 */
export function randomBytes(n: number): Buffer {
  if (n > POOL_BYTES) return fromKernel(n);
  if (offset + n > pool.length) {
    pool = fromKernel(POOL_BYTES);
    offset = 0;
  }
  const out = Buffer.from(pool.subarray(offset, offset + n));
  // A drawn id does not stay behind in the pool.
  pool.fill(0, offset, offset + n);
  offset += n;
  return out;
}

function fromKernel(n: number): Buffer {
  const out = Buffer.allocUnsafeSlow(n);
  let fd: number | undefined;
  try {
    fd = openSync("/dev/urandom", "r");
    for (let got = 0; got < n; ) {
      const read = readSync(fd, out, got, n - got, null);
      if (read === 0) throw new Error("/dev/urandom ended");
      got += read;
    }
    return out;
  } catch {
    return process.getBuiltinModule("node:crypto").randomBytes(n);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
