// Bytes cut at arbitrary points, for properties of incremental parsers: whatever the cuts (taken
// modulo the length, duplicates merged), the pieces concatenate to the input, empty ones included.
export function splitAt<T extends Uint8Array>(bytes: T, cuts: readonly number[]): T[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: T[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(from, point) as T);
    from = point;
  }
  chunks.push(bytes.subarray(from) as T);
  return chunks;
}
