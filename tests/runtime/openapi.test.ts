import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEY_SCHEME,
  buildDocumentedDataPlane,
  type DocumentedDataPlane,
  formatOpenApiDocument,
  listMachineryErrors,
  OPENAPI_FILE,
  PUBLIC_ROUTES,
  routeKey,
} from '../../runtime/print-openapi.js';

interface Operation {
  readonly responses: Record<string, unknown>;
  readonly security?: readonly Record<string, unknown>[];
}

type OpenApiDocument = {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string };
  readonly paths: Record<string, Record<string, Operation>>;
};

/** `/approvals/:id` in Fastify is `/approvals/{id}` in OpenAPI. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

describe('OpenAPI document of the data plane (schema/openapi.json)', () => {
  let dataPlane: DocumentedDataPlane;
  let document: OpenApiDocument;
  beforeAll(async () => {
    dataPlane = await buildDocumentedDataPlane();
    document = dataPlane.document() as OpenApiDocument;
  });
  afterAll(async () => {
    await dataPlane?.close();
  });

  const operation = (method: string, url: string) =>
    document.paths[openApiPath(url)]?.[method.toLowerCase()];

  it('is the committed file, byte for byte', async () => {
    const committed = await readFile(OPENAPI_FILE, 'utf8').catch(() => '');
    expect(
      committed === formatOpenApiDocument(document),
      'schema/openapi.json is out of date: run `npm run schema:generate` and commit the result',
    ).toBe(true);
  });

  it('is OpenAPI 3.1 with the bearer API-key scheme', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.title).toBe('Agent Gateway data plane');
    expect(document).toMatchObject({
      components: { securitySchemes: { [API_KEY_SCHEME]: { type: 'http', scheme: 'bearer' } } },
    });
  });

  it('documents every route of the app, and nothing else', () => {
    expect(dataPlane.routes.length).toBeGreaterThanOrEqual(5);
    for (const route of dataPlane.routes) {
      expect(operation(route.method, route.url), routeKey(route)).toBeDefined();
    }
    const documented = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const registered = dataPlane.routes.map((r) => `${r.method} ${openApiPath(r.url)}`);
    expect(documented.sort()).toEqual([...new Set(registered)].sort());
  });

  it('names the public routes that exist (security: [] says "none"), and requires the API key everywhere else', () => {
    const keys = new Set(dataPlane.routes.map(routeKey));
    expect([...PUBLIC_ROUTES].filter((key) => !keys.has(key))).toEqual([]);
    for (const route of dataPlane.routes) {
      const security = operation(route.method, route.url)?.security;
      if (PUBLIC_ROUTES.has(routeKey(route))) expect(security, routeKey(route)).toEqual([]);
      else expect(security, routeKey(route)).toEqual([{ [API_KEY_SCHEME]: [] }]);
    }
  });

  it("documents each route's declared answers and the error statuses of the shared machinery", () => {
    for (const route of dataPlane.routes) {
      const documented = Object.keys(operation(route.method, route.url)?.responses ?? {});
      const declared = Object.keys((route.schema?.response as object | undefined) ?? {});
      const errors = [...listMachineryErrors(route).keys()].map(String);
      expect(documented, routeKey(route)).toEqual(expect.arrayContaining([...declared, ...errors]));
    }
  });

  it('every route answers a bare request (no key, no body) with a documented status', async () => {
    for (const route of dataPlane.routes) {
      const url = route.url.replace(/:([A-Za-z0-9_]+)/g, 'x');
      const response = await dataPlane.app.inject({
        method: route.method as 'GET' | 'POST',
        url,
      });
      const documented = Object.keys(operation(route.method, route.url)?.responses ?? {});
      expect(documented, `${routeKey(route)} answered ${response.statusCode}`).toContain(
        String(response.statusCode),
      );
      if (!PUBLIC_ROUTES.has(routeKey(route))) expect(response.statusCode, url).toBe(401);
      // A public route asks no API key (OAuth endpoints may still answer 401 invalid_client).
      else expect(response.body, url).not.toContain('AUTH_INVALID_API_KEY');
    }
  });
});
