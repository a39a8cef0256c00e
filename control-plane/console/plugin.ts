// The operator console at /console, served by the control plane (same origin as /graphql, so the
// API key never crosses origins and no CORS is needed). index.html is answered for /console and
// the SPA's own routes below it (one or two segments), with a fresh CSP nonce in a
// meta tag for the style elements Mantine and CodeMirror create; scripts come only from 'self'.
// Hashed assets are immutable for a year; index.html is never cached, so a new build is picked up
// on the next load.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { buildErrorBody, gatewayError } from '../../shared/errors/index.js';
import { findPackageRoot } from '../../shared/package-root.js';
import { type ConsoleBuild, gzipOf, loadConsoleBuild } from './assets.js';

export const CONSOLE_PATH = '/console';
/** The console's GraphiQL screen (web-console/src/screens/graphiql/), where /graphql sends browsers. */
export const GRAPHIQL_PATH = `${CONSOLE_PATH}/graphiql`;

export interface ConsolePluginOptions {
  /** The built console; default: web-console/dist of the installed package. */
  readonly dir?: string;
}

/** The page's Content-Security-Policy: nothing inline but nonce-carrying style elements. */
export function consoleCsp(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    // 'self' covers ws:/wss: to the same host (CSP Level 3): the graphql-ws socket.
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

const pageSchema = (summary: string, operationId: string) => ({
  summary,
  operationId,
  description:
    'The operator console (docs/console.md): index.html with a strict Content-Security-Policy; ' +
    'the single-page app signs in with an API key and talks to /graphql.',
  response: {
    200: {
      description: 'The console page.',
      content: { 'text/html': { schema: { type: 'string' } } },
    },
    503: {
      description: 'CONSOLE_NOT_BUILT: the installation has no built console.',
      type: 'object',
      properties: { error: { type: 'string' }, reasonCode: { type: 'string' } },
    },
  },
});

export async function consolePlugin(
  app: FastifyInstance,
  options: ConsolePluginOptions,
): Promise<void> {
  const dir = options.dir ?? join(findPackageRoot(), 'web-console', 'dist');
  const build: ConsoleBuild | null = loadConsoleBuild(dir);
  if (!build) {
    app.log.warn(
      { dir, code: 'CONSOLE_NOT_BUILT' },
      'the operator console is not built; /console answers 503 until `npm run build:console`',
    );
  }

  const page = (_request: FastifyRequest, reply: FastifyReply) => {
    if (!build) {
      const error = gatewayError('CONSOLE_NOT_BUILT', { file: join(dir, 'index.html') });
      return reply.code(503).send(buildErrorBody(error));
    }
    const nonce = randomBytes(16).toString('base64');
    const html = build.indexHtml.replace(
      '<head>',
      `<head>\n    <meta name="csp-nonce" content="${nonce}" />`,
    );
    return reply
      .headers({ ...HTML_HEADERS, 'content-security-policy': consoleCsp(nonce) })
      .send(html);
  };

  app.get(CONSOLE_PATH, { schema: pageSchema('The operator console', 'getConsole') }, page);
  // The SPA's own routes are at most two segments deep (/console/agents/<id>); naming them keeps
  // every served path documented and anything deeper a 404.
  const segment = { type: 'string', maxLength: 200 };
  app.get(
    `${CONSOLE_PATH}/:screen`,
    {
      schema: {
        ...pageSchema('A screen of the operator console', 'getConsoleScreen'),
        params: { type: 'object', properties: { screen: segment }, required: ['screen'] },
      },
    },
    page,
  );
  app.get(
    `${CONSOLE_PATH}/:screen/:item`,
    {
      schema: {
        ...pageSchema('One item on a screen of the operator console', 'getConsoleItem'),
        params: {
          type: 'object',
          properties: { screen: segment, item: segment },
          required: ['screen', 'item'],
        },
      },
    },
    page,
  );
  app.get(
    `${CONSOLE_PATH}/assets/:file`,
    {
      schema: {
        summary: 'A hashed, immutable file of the console build',
        operationId: 'getConsoleAsset',
        params: {
          type: 'object',
          properties: { file: { type: 'string', maxLength: 200 } },
          required: ['file'],
        },
        response: {
          200: {
            description: 'The file (JavaScript, CSS or an image), gzip-encoded when asked.',
            content: { '*/*': { schema: { type: 'string' } } },
          },
          404: {
            description:
              'NOT_FOUND: no such file in this build (an older page asks a newer gateway).',
            type: 'object',
            properties: { error: { type: 'string' }, reasonCode: { type: 'string' } },
          },
        },
      },
    },
    (request, reply) => {
      const { file } = request.params as { file: string };
      const asset = build?.assets.get(file);
      if (!asset) return reply.callNotFound();
      reply.headers({
        'content-type': asset.contentType,
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
        vary: 'accept-encoding',
      });
      const acceptsGzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
      const gzip = acceptsGzip ? gzipOf(asset) : null;
      if (gzip) return reply.header('content-encoding', 'gzip').send(gzip);
      return reply.send(asset.body);
    },
  );
}
