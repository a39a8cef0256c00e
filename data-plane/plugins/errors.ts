// One error model for every data-plane answer that is not a decision: a JSON object
// `{ error, reasonCode, message, hint }` whose code comes from the registry (shared/errors), with
// the registry's HTTP status. Fastify's own errors (body too large, bad JSON, schema validation,
// unsupported media type) are mapped onto registry codes; anything unexpected is logged and
// answered as INTERNAL_ERROR without details. Routes may map errors further (inspect answers a
// body that is not JSON with MCP_MALFORMED_RPC, as the spec requires).
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import {
  ERROR_CODES,
  type ErrorCode,
  GatewayError,
  isErrorCode,
} from '../../shared/errors/index.js';

export interface ErrorBody {
  readonly error: ErrorCode;
  readonly reasonCode: ErrorCode;
  readonly message: string;
  readonly hint: string;
  readonly [detail: string]: unknown;
}

export const errorBodySchema = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    reasonCode: { type: 'string' },
    message: { type: 'string' },
    hint: { type: 'string' },
  },
  required: ['error', 'reasonCode', 'message'],
  additionalProperties: true,
} as const;

export function errorBody(
  code: ErrorCode,
  message: string,
  details?: Readonly<Record<string, unknown>>,
): ErrorBody {
  return { ...details, error: code, reasonCode: code, message, hint: ERROR_CODES[code].hint };
}

export function sendError(reply: FastifyReply, error: GatewayError): FastifyReply {
  return reply.code(error.status ?? 500).send(errorBody(error.code, error.message, error.details));
}

/** Maps Fastify's and our own errors onto the registry. */
export function toGatewayError(error: FastifyError | Error): GatewayError {
  if (error instanceof GatewayError) return error;
  const fastifyError = error as FastifyError;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('REQUEST_TOO_LARGE', 'request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('REQUEST_UNSUPPORTED_MEDIA_TYPE', 'request body must be JSON');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('REQUEST_INVALID', 'request body is not valid JSON');
    default:
      break;
  }
  if (fastifyError.validation) {
    return new GatewayError('REQUEST_INVALID', fastifyError.message);
  }
  if (fastifyError instanceof SyntaxError || fastifyError.statusCode === 400) {
    return new GatewayError('REQUEST_INVALID', 'request body is not valid JSON');
  }
  if (fastifyError.statusCode === 429 && isErrorCode(fastifyError.code)) {
    return new GatewayError(fastifyError.code, fastifyError.message);
  }
  if (fastifyError.statusCode === 413) {
    return new GatewayError('REQUEST_TOO_LARGE', 'request body is too large');
  }
  if (fastifyError.statusCode === 415) {
    return new GatewayError('REQUEST_UNSUPPORTED_MEDIA_TYPE', 'request body must be JSON');
  }
  return new GatewayError('INTERNAL_ERROR', 'unexpected error', { cause: error });
}

export const errorsPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error, request, reply) => {
      const mapped = toGatewayError(error as FastifyError);
      if (mapped.code === 'INTERNAL_ERROR') {
        request.log.error({ err: error }, 'unexpected error');
      }
      return sendError(reply, mapped);
    });
    app.setNotFoundHandler((request, reply) =>
      sendError(
        reply,
        new GatewayError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`),
      ),
    );
  },
  { name: 'agent-gateway-errors' },
);
