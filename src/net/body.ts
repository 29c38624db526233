/** The body when it is at most `max` bytes; undefined (and the download cancelled) once it is over. */
export async function readUpTo(res: Response, max: number): Promise<Buffer | undefined> {
  if (!res.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > max) return undefined; // leaving the loop cancels the download
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
