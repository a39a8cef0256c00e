// Bundles the server commands (cli/server-commands.ts, as tsc emitted it in dist/) with every module
// they import, packages included, into one file: dist/bundle/server-commands.js. Part of `npm run
// build`; cli/load-server-commands.ts says why.
//
// esbuild (a dev dependency, as vite's is: the build runs where dev dependencies are installed;
// 0.28 runs on Node >= 18) does the bundling. What it cannot know is that a module finds files
// beside itself: `import.meta.url` and a CommonJS module's `__dirname` would name the bundle, not
// the module. So every module using them gets its own location back, as a path relative to the
// bundle (the build may be moved with the folder it sits in): the PGlite worker, the cluster
// template, the migrations, the console's files and Prisma's engine are found where they are.
// Modules run in one bundle instead of their own files behave the same otherwise: nothing here
// looks at its own source text or file names.
import { readFile, rm } from 'node:fs/promises';
import { dirname, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));
const entry = `${root}dist/cli/server-commands.js`;
const outdir = `${root}dist/bundle`;

/** `path` relative to the bundle's folder, as a URL path (`./…` or `../…`). */
function fromBundle(path) {
  const text = relative(outdir, path).split(sep).join('/');
  return text.startsWith('.') ? text : `./${text}`;
}

/** The bundle's URL, set by the banner, for the modules below. */
const BUNDLE_URL = '__bundleUrl';
const OWN_LOCATION = /\bimport\.meta\.url\b|\b__dirname\b|\b__filename\b/;

/** Gives each module that asks where it is its own location instead of the bundle's. */
const ownLocations = {
  name: 'own-locations',
  setup(builder) {
    builder.onLoad({ filter: /\.[cm]?js$/ }, async ({ path }) => {
      const text = await readFile(path, 'utf8');
      if (!OWN_LOCATION.test(text)) return undefined;
      // The bundle's own URL comes from the banner: `import.meta` in a CommonJS module would make
      // esbuild read it as an ES module (and lose its exports).
      const url = `new URL(${JSON.stringify(fromBundle(path))}, ${BUNDLE_URL}).href`;
      let contents = text.replace(/\bimport\.meta\.url\b/g, url);
      // An ES module cannot use them; in CommonJS they are the module's own file and folder.
      if (/\b__dirname\b|\b__filename\b/.test(text) && !/\bimport\.meta\b/.test(text)) {
        contents =
          `var __filename = require('node:url').fileURLToPath(${url});\n` +
          `var __dirname = require('node:path').dirname(__filename);\n${contents}`;
      }
      return { contents, loader: 'js', resolveDir: dirname(path) };
    });
  },
};

await rm(outdir, { recursive: true, force: true });
const started = performance.now();
await build({
  entryPoints: [entry],
  outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // What CommonJS modules `require` at run time (built-ins, optional peers) is resolved from here.
  banner: {
    js: [
      "import { createRequire as __bundleCreateRequire } from 'node:module';",
      `const ${BUNDLE_URL} = import.meta.url;`,
      `const require = __bundleCreateRequire(${BUNDLE_URL});`,
    ].join('\n'),
  },
  sourcemap: 'linked',
  logLevel: 'warning',
  plugins: [ownLocations],
});
console.log(
  `bundled ${fromBundle(entry)} into dist/bundle/server-commands.js in ${Math.round(performance.now() - started)} ms`,
);
