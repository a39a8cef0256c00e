// How deep and how large a parsed JSON value is, checked without recursion: request bodies are
// attacker-controlled, and later steps (canonical JSON, detectors, NPL paths, JSON-LD processing
// of credentials) must never meet a structure deep or large enough to hurt them.

/** True when `root` nests at most `maxDepth` containers deep and holds at most `maxNodes` of them. */
export function withinJsonBounds(root: unknown, maxDepth: number, maxNodes: number): boolean {
  if (typeof root !== 'object' || root === null) return true;
  const stack: unknown[] = [root];
  const depths: number[] = [1];
  let nodes = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    const depth = depths.pop() as number;
    if (++nodes > maxNodes || depth > maxDepth) return false;
    const children = Array.isArray(value) ? value : Object.values(value as object);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        stack.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return true;
}
