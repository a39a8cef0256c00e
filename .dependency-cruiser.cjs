// The layers of docs/architecture.md, checked on resolved import paths by `npm run lint:layers`
// (part of `npm test`): shared <- storage <- http-edge <- planes <- runtime <- cli. Tests may import
// anything.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'shared-imports-only-shared',
      comment:
        'shared/ is pure code both planes use: it imports nothing of the project outside shared/.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(storage|http-edge|data-plane|control-plane|runtime|cli|prisma)/' },
    },
    {
      name: 'storage-imports-no-plane',
      comment:
        'storage/ is the database edge both planes share: it imports no HTTP edge, plane, ' +
        'runtime or cli.',
      severity: 'error',
      from: { path: '^storage/' },
      to: { path: '^(http-edge|data-plane|control-plane|runtime|cli)/' },
    },
    {
      name: 'http-edge-imports-no-plane',
      comment:
        'http-edge/ is the HTTP edge every process shares (the Fastify instance, errors, health, ' +
        'metrics, refusal auditing): it imports only shared/ and storage/, never a plane.',
      severity: 'error',
      from: { path: '^http-edge/' },
      to: { path: '^(data-plane|control-plane|runtime|cli)/' },
    },
    {
      name: 'data-plane-is-independent',
      comment: 'The data plane never imports the control plane, the composition or the CLI.',
      severity: 'error',
      from: { path: '^data-plane/' },
      to: { path: '^(control-plane|runtime|cli)/' },
    },
    {
      name: 'control-plane-is-independent',
      comment: 'The control plane never imports the data plane, the composition or the CLI.',
      severity: 'error',
      from: { path: '^control-plane/' },
      to: { path: '^(data-plane|runtime|cli)/' },
    },
    {
      name: 'runtime-is-below-cli',
      comment: 'runtime/ composes processes; only cli/ (and tests) start them.',
      severity: 'error',
      from: { path: '^runtime/' },
      to: { path: '^cli/' },
    },
    {
      name: 'only-cli-imports-runtime',
      comment: 'The composition is imported only by cli/ and tests.',
      severity: 'error',
      from: { path: '^(shared|storage|http-edge|data-plane|control-plane)/' },
      to: { path: '^runtime/' },
    },
    {
      name: 'no-circular',
      comment:
        'Modules that import each other at load time cannot be read (or loaded) one at a time; ' +
        'a type-only import or a lazy import() back is not a load-time cycle.',
      severity: 'error',
      from: {},
      to: {
        circular: true,
        viaOnly: { dependencyTypesNot: ['type-only', 'type-import', 'dynamic-import'] },
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(tests|node_modules|dist|prisma/generated)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
  },
};
