// One error model for every HTTP answer that is not a decision (GraphQL maps the same registry
// its own way, control-plane/graphql/errors.ts): a JSON object
// `{ error, reasonCode, message, hint }` whose code comes from the registry (shared/errors), with
// the registry's HTTP status. Fastify's own errors (body too large, bad JSON, schema validation,
// unsupported media type) are mapped onto registry codes; anything unexpected is logged and
// answered as INTERNAL_ERROR without details. Routes may map errors further (inspect answers a
// body that is not JSON with MCP_MALFORMED_RPC, as the spec requires).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { buildErrorBody, GatewayError, gatewayError } from '../shared/errors/index.js';
import { formatByteSize } from '../shared/text/byte-size.js';

export { buildErrorBody, type ErrorBody, errorBodySchema } from '../shared/errors/index.js';

export function sendError(reply: FastifyReply, error: GatewayError): FastifyReply {
  return reply
    .code(error.status ?? 500)
    .send(buildErrorBody(error.code, error.message, error.details));
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
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return gatewayError('REQUEST_INVALID', { problem: 'request body is not valid JSON' });
    default:
      break;
  }
  if (fastifyError.validation) {
    return gatewayError('REQUEST_INVALID', { problem: fastifyError.message });
  }
  if (fastifyError instanceof SyntaxError || fastifyError.statusCode === 400) {
    return gatewayError('REQUEST_INVALID', { problem: 'request body is not valid JSON' });
  }
  if (fastifyError.statusCode === 413) {
    return bodyTooLarge(request);
  }
  if (fastifyError.statusCode === 415) {
    return gatewayError('REQUEST_UNSUPPORTED_MEDIA_TYPE');
  }
  return gatewayError('INTERNAL_ERROR', undefined, { cause: error });
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
