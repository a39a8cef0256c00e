// The OpenAPI 3.1 document of every data-plane route, generated from the route schemas of the
// app exactly as the gateway builds it (`buildGatewayRuntime`), committed as schema/openapi.json.
// `@fastify/swagger` must see every route as it is added, so it is registered on the gateway's
// Fastify instance the moment that instance is created (Fastify's `fastify.initialization`
// diagnostics channel): the gateway's own construction code stays as it is. Building the app
// touches no database; an empty in-memory PGlite stands in for the one `start` opens.
//
// Besides what each route declares, every operation documents the error answers the shared
// machinery gives (authentication, body parsing, validation, rate limiting), so a client sees
// every status it can get. `tsx runtime/print-openapi.ts --write` (`npm run schema:generate`)
// rewrites the committed file with stable key order.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { writeFile } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifySwagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import pino from 'pino';
import { errorBodySchema } from '../http-edge/errors.js';
import { createReadiness } from '../http-edge/health.js';
import { ERROR_CODES, type ErrorCode } from '../shared/errors/index.js';
import { findPackageRoot, packageVersion } from '../shared/package-root.js';
import { PublicUrl } from '../shared/public-url.js';
import { openDatabase } from '../storage/engine/database.js';
import { buildGatewayRuntime } from './gateway-runtime.js';

/** Routes anyone may call; every other route needs an API key (`Authorization: Bearer agk_…`). */
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set([
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'POST /api/v1/public/compliance/validate/batch',
  'GET /1.0/identifiers/:did',
  'GET /contexts/:file',
  'GET /api/v1/agentiam/status-lists/:id',
  'GET /.well-known/oauth-authorization-server',
  'GET /oauth/jwks',
  // The audit verifier keys, published like a JWKS (docs/audit.md, "Checkpoints").
  'GET /api/v1/audit/checkpoint/key',
  // RFC 9728: where an MCP client learns which authorization server issues tokens for the proxy.
  'GET /.well-known/oauth-protected-resource/mcp/:serverId',
  // OAuth client authentication (RFC 6749 §2.3: Basic, the form, or private_key_jwt) instead of
  // an API key; docs/oauth.md.
  'POST /oauth/token',
  'POST /oauth/introspect',
  'POST /oauth/revoke',
  // The agent's identity proof authenticates the authorization request (docs/oauth.md).
  'GET /oauth/authorize',
  'POST /oauth/authorize',
  // The operator console's page and files; it signs in with an API key itself (docs/console.md).
  'GET /console',
  'GET /console/:screen',
  'GET /console/:screen/:item',
  'GET /console/assets/:file',
]);

export const API_KEY_SCHEME = 'apiKey';

/** A route as the app registered it: method, URL pattern and the schema it was given. */
export interface DataPlaneRoute {
  readonly method: string;
  readonly url: string;
  readonly schema: FastifySchema | undefined;
  readonly rateLimited: boolean;
}

export function routeKey(route: { method: string; url: string }): string {
  return `${route.method} ${route.url}`;
}

/**
 * The error statuses a route can answer besides the ones its schema declares: 401/403 from
 * API-key authentication, 400 from validation, 413/415 from body parsing, 429 from the rate
 * limiter, 500 for anything unexpected. Each maps to its registry code.
 */
export function listMachineryErrors(route: DataPlaneRoute): ReadonlyMap<number, ErrorCode> {
  const errors = new Map<number, ErrorCode>();
  if (!PUBLIC_ROUTES.has(routeKey(route))) {
    errors.set(401, 'AUTH_INVALID_API_KEY');
    errors.set(403, 'AUTH_INSUFFICIENT_SCOPE');
  }
  const hasBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
  const { schema } = route;
  if (hasBody || schema?.body || schema?.params || schema?.querystring) {
    errors.set(400, 'REQUEST_INVALID');
  }
  if (hasBody) {
    errors.set(413, 'REQUEST_TOO_LARGE');
    errors.set(415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE');
  }
  if (route.rateLimited) errors.set(429, 'RATE_LIMITED');
  errors.set(500, 'INTERNAL_ERROR');
  return errors;
}

export interface DocumentedDataPlane {
  readonly app: FastifyInstance;
  /** Every route the app registered (HEAD twins of GET routes excluded). */
  readonly routes: readonly DataPlaneRoute[];
  /** The OpenAPI document, keys sorted (the form committed under schema/). */
  document(): object;
  close(): Promise<void>;
}

/** Builds the gateway's data-plane app with `@fastify/swagger` attached; ready, not listening. */
export async function buildDocumentedDataPlane(): Promise<DocumentedDataPlane> {
  const db = await openDatabase({});
  const routes: DataPlaneRoute[] = [];
  let attached = false;
  const attach = (message: unknown) => {
    if (attached) return;
    attached = true;
    const app = (message as { fastify: FastifyInstance }).fastify;
    app.addHook('onRoute', (route: RouteOptions) => {
      if (route.method === 'HEAD') return;
      for (const method of [route.method].flat()) {
        routes.push({
          method,
          url: route.url,
          schema: route.schema,
          rateLimited: Boolean((route.config as { rateLimit?: unknown } | undefined)?.rateLimit),
        });
      }
    });
    void app.register(fastifySwagger, swaggerOptions());
  };
  subscribe('fastify.initialization', attach);
  let runtime: Awaited<ReturnType<typeof buildGatewayRuntime>>;
  try {
    runtime = await buildGatewayRuntime({
      db,
      logger: pino({ level: 'silent' }),
      readiness: createReadiness(),
      defaultMetrics: false,
      // The app never listens here; routes that name the public URL get the default one.
      publicUrl: new PublicUrl('http://127.0.0.1:8080'),
    });
  } catch (error) {
    await db.close();
    throw error;
  } finally {
    unsubscribe('fastify.initialization', attach);
  }
  if (!attached) throw new Error('the data-plane app was not created through Fastify()');
  await runtime.app.ready();
  return {
    app: runtime.app,
    routes,
    document: () => sortKeys(runtime.app.swagger()) as object,
    async close() {
      await runtime.app.close();
      await runtime.stop();
      await db.close();
    },
  };
}

/** The OpenAPI document of the data plane, keys sorted (the form committed under schema/). */
export async function generateOpenApiDocument(): Promise<object> {
  const documented = await buildDocumentedDataPlane();
  try {
    return documented.document();
  } finally {
    await documented.close();
  }
}

/** The committed text: two-space JSON, sorted keys, trailing newline. */
export function formatOpenApiDocument(document: object): string {
  return `${JSON.stringify(sortKeys(document), null, 2)}\n`;
}

export const OPENAPI_FILE = join(findPackageRoot(), 'schema', 'openapi.json');

function swaggerOptions(): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent Gateway data plane',
        version: packageVersion(),
        description:
          'REST endpoints of the Agent Gateway data plane: tool-call inspection, approvals, ' +
          'health, metrics and public compliance validation. Errors that are not decisions ' +
          'answer `{ error, reasonCode, message, hint }` with a code from the error registry.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [
        {
          url: 'http://127.0.0.1:8080',
          description:
            'A gateway started with `npm start` on its defaults (AGENT_GATEWAY_HOST, AGENT_GATEWAY_PORT).',
        },
      ],
      components: {
        securitySchemes: {
          [API_KEY_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'agk_<prefix>_<secret>',
            description: 'A tenant API key; each operation names the scope it needs.',
          },
        },
      },
    },
    transform({ schema, url, route }) {
      const method = [route.method].flat()[0] ?? 'GET';
      const documented: DataPlaneRoute = {
        method,
        url: route.url,
        schema,
        rateLimited: Boolean((route.config as { rateLimit?: unknown } | undefined)?.rateLimit),
      };
      return { schema: documentSchema(documented), url };
    },
  };
}

/** The route's schema with security and the machinery's error answers added. */
function documentSchema(route: DataPlaneRoute): FastifySchema {
  const schema: Record<string, unknown> = { ...route.schema };
  const response: Record<string, unknown> = {
    ...(schema.response as Record<string, unknown> | undefined),
  };
  if (routeKey(route) === 'GET /metrics') {
    response[200] ??= {
      description: 'Prometheus text exposition format (version 0.0.4).',
      content: { 'text/plain': { schema: { type: 'string' } } },
    };
  }
  for (const [status, code] of listMachineryErrors(route)) {
    if (response[status] === undefined) {
      response[status] = {
        ...errorBodySchema,
        description: `${code}: ${ERROR_CODES[code].summary}`,
      };
    }
  }
  // Declared answers without a description get the status text instead of "Default Response".
  for (const [status, declared] of Object.entries(response)) {
    const text = STATUS_CODES[status];
    if (text && typeof declared === 'object' && declared && !('description' in declared)) {
      response[status] = { ...declared, description: text };
    }
  }
  schema.response = response;
  // Public routes say so explicitly (an empty requirement), so no operation is left ambiguous.
  schema.security = PUBLIC_ROUTES.has(routeKey(route)) ? [] : [{ [API_KEY_SCHEME]: [] }];
  return schema as FastifySchema;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const child = (value as Record<string, unknown>)[key];
    if (child !== undefined) sorted[key] = sortKeys(child);
  }
  return sorted;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const document = await generateOpenApiDocument();
  const text = formatOpenApiDocument(document);
  if (process.argv.includes('--write')) {
    await writeFile(OPENAPI_FILE, text);
    process.stderr.write(`wrote ${OPENAPI_FILE}\n`);
  } else {
    process.stdout.write(text);
  }
}
