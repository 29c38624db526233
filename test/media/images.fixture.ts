/** Small image files made in memory: only their headers matter to hermes (the fake model does not decode them). */

/** A baseline JPEG header (APP0 JFIF, then a start-of-frame with the size) and an end marker. */
export function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]);
  const sof = Buffer.alloc(19);
  sof.set([0xff, 0xc0, 0x00, 0x11, 0x08]);
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  sof.set([0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01], 9);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.from([0xff, 0xd9])]);
}

/** A PNG signature and IHDR chunk. */
export function png(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]);
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  b.set([0x08, 0x02, 0x00, 0x00, 0x00], 24);
  return b;
}

/** An Ogg page header, enough to look like a voice note's bytes. */
export const OGG = Buffer.concat([Buffer.from("OggS\0\x02", "latin1"), Buffer.alloc(200, 7)]);
