import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/**
 * Random bytes for ids without node:crypto. Most of the daemon's ids (runs, calls, stored media) need
 * only be unique, and loading node:crypto sets up OpenSSL, 2.5 MB of an idle daemon's memory on Node 24
 * (0.7 MB on Node 20). What must be unguessable (approval ids, dashboard sessions) comes from
 * `secretBytes`: node:crypto, whose getrandom() also waits for the kernel's generator to be seeded,
 * loaded by the first such value.
 */

const POOL_BYTES = 4096;
let pool: Buffer = Buffer.alloc(0);
let offset = 0;

/**
 * `n` bytes from the kernel's random source (/dev/urandom), drawn from a pool refilled 4 KiB at a time;
 * where that is not the character device (a container without it, a file in its place), from node:crypto.
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

/** node:crypto, loaded by its first use rather than at start. */
export const nodeCrypto = () => process.getBuiltinModule("node:crypto");

/** `n` unguessable bytes, from node:crypto. */
export function secretBytes(n: number): Buffer {
  return nodeCrypto().randomBytes(n);
}

function fromKernel(n: number): Buffer {
  const out = Buffer.allocUnsafeSlow(n);
  let fd: number | undefined;
  try {
    fd = openSync("/dev/urandom", "r");
    if (!fstatSync(fd).isCharacterDevice()) throw new Error("/dev/urandom is not a device");
    for (let got = 0; got < n; ) {
      const read = readSync(fd, out, got, n - got, null);
      if (read === 0) throw new Error("/dev/urandom ended");
      got += read;
    }
    return out;
  } catch {
    return secretBytes(n);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
