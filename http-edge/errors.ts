// One error model for every HTTP answer that is not a decision (GraphQL maps the same registry
// its own way, control-plane/graphql/errors.ts): a JSON object
// `{ error, reasonCode, message, hint }` whose code comes from the registry (shared/errors), with
// the registry's HTTP status. Fastify's own errors (body too large, bad JSON, schema validation,
// unsupported media type) are mapped onto registry codes; anything unexpected is logged and
// answered as INTERNAL_ERROR without details. Routes may map errors further (inspect answers a
// body that is not JSON with MCP_MALFORMED_RPC, as the spec requires).
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchemaValidationError,
} from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import {
  buildErrorBody,
  type FieldIssue,
  GatewayError,
  gatewayError,
} from '../shared/errors/index.js';
import { formatByteSize } from '../shared/text/byte-size.js';
import { BODY_FIELD, invalidField, requestInvalid } from '../shared/validation/field-issues.js';

export { buildErrorBody, type ErrorBody, errorBodySchema } from '../shared/errors/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's documentation page (`docs/spawn.md#request`): every error answer of the route
     * names it in `docs`, so a refusal points at the page that describes the request.
     */
    docs?: string;
  }
}

/** Where a request that matched no route is pointed: the README's table of routes. */
export const ROUTES_DOCS = 'README.md#http-api-data-plane';

/**
 * The request's documentation page: its route's (route config `docs`), the table of routes when
 * it matched none (an unknown path, a URL that cannot be decoded), else none.
 */
export function docsOf(request: FastifyRequest): string | undefined {
  if (request.routeOptions.url === undefined || request.is404) return ROUTES_DOCS;
  return (request.routeOptions.config as { docs?: string } | undefined)?.docs;
}

export function sendError(reply: FastifyReply, error: GatewayError): FastifyReply {
  return reply.code(error.status ?? 500).send(buildErrorBody(error, docsOf(reply.request)));
}

/** Maps Fastify's and our own errors onto the registry; `request` names the route and its limits. */
export function toGatewayError(error: FastifyError | Error, request: FastifyRequest): GatewayError {
  if (error instanceof GatewayError) return error;
  const fastifyError = error as FastifyError;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge(request);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return gatewayError('REQUEST_UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidField(BODY_FIELD, 'is empty: send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidField(BODY_FIELD, 'is not valid JSON');
    default:
      break;
  }
  if (fastifyError.validation) {
    return requestInvalid(
      fastifyError.validation.map((problem) =>
        schemaIssue(problem, fastifyError.validationContext),
      ),
    );
  }
  if (fastifyError instanceof SyntaxError || fastifyError.statusCode === 400) {
    return invalidField(
      BODY_FIELD,
      /prototype/.test(fastifyError.message)
        ? 'holds a __proto__ or constructor.prototype key, which is never accepted'
        : 'is not valid JSON',
    );
  }
  if (fastifyError.statusCode === 413) {
    return bodyTooLarge(request);
  }
  if (fastifyError.statusCode === 415) {
    return gatewayError('REQUEST_UNSUPPORTED_MEDIA_TYPE');
  }
  return gatewayError('INTERNAL_ERROR', undefined, { cause: error });
}

/**
 * One problem Fastify's own schema validation found (a route's params or querystring), as a
 * field issue worded as the body validator words zod's (shared/validation/field-issues.ts).
 */
function schemaIssue(problem: FastifySchemaValidationError, part: string | undefined): FieldIssue {
  const params = problem.params as { missingProperty?: string; additionalProperty?: string };
  const path = problem.instancePath.split('/').filter((segment) => segment !== '');
  if (params.missingProperty !== undefined) {
    return { field: [...path, params.missingProperty].join('.'), message: 'is required' };
  }
  if (params.additionalProperty !== undefined) {
    return {
      field: [...path, params.additionalProperty].join('.'),
      message: `is not a ${part === 'querystring' ? 'query parameter' : 'field'} of this request`,
    };
  }
  return {
    field: path.length > 0 ? path.join('.') : `(${part ?? 'request'})`,
    message: wordAjvProblem(problem),
  };
}

const AJV_TYPES: Readonly<Record<string, string>> = {
  number: 'a number',
  integer: 'an integer',
  string: 'a string',
  boolean: 'true or false',
  object: 'a JSON object',
  array: 'an array',
};

const AJV_FORMATS: Readonly<Record<string, string>> = {
  'date-time': 'an RFC 3339 date-time (2026-11-27T10:00:00Z)',
};

function wordAjvProblem(problem: FastifySchemaValidationError): string {
  const params = problem.params as Record<string, unknown>;
  switch (problem.keyword) {
    case 'type':
      return `must be ${AJV_TYPES[String(params.type)] ?? String(params.type)}`;
    case 'format':
      return `must be ${AJV_FORMATS[String(params.format)] ?? `a valid ${String(params.format)}`}`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'minLength':
      return params.limit === 1
        ? 'must not be empty'
        : `must be at least ${String(params.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters`;
    case 'pattern':
      return 'is not in the form this field takes';
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      return problem.message ?? 'is not valid';
  }
}

/** REQUEST_TOO_LARGE naming the route and its body limit, in bytes and as people read it. */
function bodyTooLarge(request: FastifyRequest): GatewayError {
  const { method, url, bodyLimit } = request.routeOptions;
  const route = `${method} ${url ?? request.url.split('?')[0]}`;
  return gatewayError(
    'REQUEST_TOO_LARGE',
    { route, limitBytes: bodyLimit, limitSize: formatByteSize(bodyLimit) },
    { details: { route, limitBytes: bodyLimit } },
  );
}

function routeNotFound(request: FastifyRequest): GatewayError {
  return gatewayError('NOT_FOUND', {
    resource: `route ${request.method} ${request.url.split('?')[0]}`,
  });
}

export const errorsPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error, request, reply) => {
      // Fastify parses the body of an unknown route before its not-found handler runs: a body
      // that does not parse (or is too large) must not hide that there is no such route.
      if (request.is404) return sendError(reply, routeNotFound(request));
      const mapped = toGatewayError(error as FastifyError, request);
      if (mapped.code === 'INTERNAL_ERROR') {
        request.log.error({ err: error }, 'unexpected error');
      }
      return sendError(reply, mapped);
    });
    app.setNotFoundHandler((request, reply) => sendError(reply, routeNotFound(request)));
  },
  { name: 'agent-gateway-errors' },
);
