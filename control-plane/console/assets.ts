// The built console (web-console/dist, made by Vite) loaded once at start: index.html as a template
// and every file under assets/ in memory; a compressible file's gzip copy is made the first time
// a browser asks for it (so a gateway whose console is never opened never pays for it). The set of
// files is fixed by the build and their names carry content hashes, so a map lookup is the whole
// "file server": no path from a request ever reaches the file system (nothing to traverse), and
// no static-file library is needed for ~20 files that never change while the process runs.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface ConsoleAsset {
  readonly body: Buffer;
  readonly contentType: string;
  readonly compressible: boolean;
}

const gzipped = new WeakMap<ConsoleAsset, Buffer | null>();

/** The asset's gzip body, made once; null when compressing it saves nothing. */
export function gzipOf(asset: ConsoleAsset): Buffer | null {
  if (!asset.compressible) return null;
  let gzip = gzipped.get(asset);
  if (gzip === undefined) {
    const made = gzipSync(asset.body, { level: 9 });
    gzip = made.length < asset.body.length ? made : null;
    gzipped.set(asset, gzip);
  }
  return gzip;
}

export interface ConsoleBuild {
  /** index.html as Vite wrote it; the plugin adds the page's CSP nonce per request. */
  readonly indexHtml: string;
  /** File name under assets/ → the file. */
  readonly assets: ReadonlyMap<string, ConsoleAsset>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
};
const COMPRESSIBLE = new Set(['.js', '.css', '.svg', '.json', '.map']);

/** Loads the build in `dir`, or null when there is none (the console is then answered 503). */
export function loadConsoleBuild(dir: string): ConsoleBuild | null {
  const indexFile = join(dir, 'index.html');
  if (!existsSync(indexFile)) return null;
  const assets = new Map<string, ConsoleAsset>();
  const assetsDir = join(dir, 'assets');
  if (existsSync(assetsDir)) {
    for (const name of readdirSync(assetsDir)) {
      const file = join(assetsDir, name);
      if (!statSync(file).isFile()) continue;
      const extension = extname(name);
      const body = readFileSync(file);
      assets.set(name, {
        body,
        contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream',
        compressible: COMPRESSIBLE.has(extension),
      });
    }
  }
  return { indexHtml: readFileSync(indexFile, 'utf8'), assets };
}
