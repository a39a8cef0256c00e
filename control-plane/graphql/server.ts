// The GraphQL API at /graphql (GET and POST): graphql-yoga inside Fastify, over the Pothos schema.
// A browser opening /graphql as a page is redirected to the console's GraphiQL (browser-page.ts).
// Per request: the API key authenticated once, before GraphQL (401 without a valid one), CSRF
// prevention (a simple request must carry a custom header), depth and cost limits checked at
// validation, introspection for authenticated keys unless switched off (introspection.ts), and
// error masking (errors.ts): only deliberate errors with a registry code reach clients.
// Subscriptions: graphql-ws (protocol graphql-transport-ws) on WebSocket upgrades of the same
// path. The key (connectionParams.authorization, else the upgrade's Authorization header) is
// checked on connect (close 4401 without a valid one) and again on every subscribe; operations
// run through yoga's envelop (`getEnveloped`), so the same limits, scopes and masking apply. While
// a socket is open its key is watched (socket-keys.ts): its expiry, its revocation (an event every
// control plane sharing the database receives) and each new snapshot close the socket with 4401.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type ExecutionArgs,
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  specifiedRules,
} from 'graphql';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { createYoga } from 'graphql-yoga';
import { type WebSocket, WebSocketServer } from 'ws';
import { GatewayError, gatewayError } from '../../shared/errors/index.js';
import { EVENT_TYPES, followEvents } from '../../shared/events/index.js';
import { GRAPHIQL_PATH } from '../console/plugin.js';
import { isPageRequest, searchOf } from './browser-page.js';
import type { Caller, GraphQLContext, GraphQLDependencies } from './context.js';
import { maskError, toGraphQLError } from './errors.js';
import { useIntrospectionSwitch } from './introspection.js';
import { schema } from './schema/index.js';
import { SocketKeys } from './socket-keys.js';
import { useStorableArguments } from './storable-arguments.js';

export const GRAPHQL_PATH = '/graphql';
/** Headers that let a request without a non-simple content type through CSRF prevention. */
export const CSRF_HEADERS = [
  'x-agent-gateway-csrf',
  'x-graphql-yoga-csrf',
  'apollo-require-preflight',
];
export const MAX_QUERY_DEPTH = 12;
export const MAX_QUERY_COST = 5000;

export interface GraphQLPluginOptions extends GraphQLDependencies {
  /** Introspection for authenticated keys (AGENT_GATEWAY_GRAPHQL_INTROSPECTION); default on. */
  readonly introspection?: boolean | undefined;
}

interface ServerContext {
  /** HTTP: the Fastify request; WebSocket: the upgrade request (then `caller` is set). */
  readonly req: FastifyRequest | IncomingMessage;
  readonly reply?: FastifyReply;
  readonly caller?: Caller;
}

/** Largest WebSocket message accepted (the same bound as an HTTP body). */
export const MAX_WS_MESSAGE_BYTES = 1024 * 1024;

/**
 * Validation rules of a WebSocket operation when introspection is switched off. yoga's plugin
 * decides per HTTP request; an operation over the socket has none, so it gets the rule here.
 */
const RULES_WITHOUT_INTROSPECTION = [...specifiedRules, NoSchemaIntrospectionCustomRule];

export async function graphqlPlugin(
  app: FastifyInstance,
  options: GraphQLPluginOptions,
): Promise<void> {
  // What every operation's context carries, as the composition injected it.
  const { introspection: introspectionOption, ...dependencies } = options;
  const { authenticate } = dependencies;
  const introspection = introspectionOption ?? true;
  const logger = app.log;
  const yoga = createYoga<ServerContext, Omit<GraphQLContext, keyof GraphQLDependencies>>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    graphiql: false,
    landingPage: false,
    logging: false,
    maskedErrors: {
      maskError: (error) => maskError(error, logger as never),
    },
    plugins: [
      useCSRFPrevention({ requestHeaders: CSRF_HEADERS }),
      maxDepthPlugin({ n: MAX_QUERY_DEPTH, exposeLimits: true, flattenFragments: true }),
      costLimitPlugin({ maxCost: MAX_QUERY_COST, exposeLimits: true }),
      useStorableArguments(),
      useIntrospectionSwitch<ServerContext>({
        enabled: introspection,
        isAuthenticated: ({ req, caller }) =>
          caller !== undefined || callers.has(req as FastifyRequest),
      }),
    ],
    context: ({ req, caller }) => ({
      ...dependencies,
      caller:
        caller ?? callers.get(req as FastifyRequest) ?? authenticate(req.headers.authorization),
    }),
  });

  // Authenticated before GraphQL runs, so a request without a valid key costs no parsing. A
  // browser has no key to send: it is sent to the console, which asks for one.
  const callers = new WeakMap<FastifyRequest, Caller>();
  app.addHook('onRequest', async (req, reply) => {
    if (isPageRequest(req.method, req.headers.accept)) {
      return reply
        .headers({ vary: 'accept', 'cache-control': 'no-store' })
        .redirect(`${GRAPHIQL_PATH}${searchOf(req.url)}`, 303);
    }
    callers.set(req, authenticate(req.headers.authorization));
  });
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
    response.headers.forEach((value, key) => {
      reply.header(key, value);
    });
    reply.status(response.status);
    return reply.send(response.body);
  };
  const routeSchema = {
    description:
      'GraphQL over HTTP; schema/schema.graphql is the schema and docs/graphql.md the guide. ' +
      'A GET, or a POST with a simple content type, must carry the x-agent-gateway-csrf header.',
    response: {
      200: {
        description: 'The GraphQL response: `data`, and `errors` with registry codes.',
        type: 'object',
        properties: { data: {}, errors: { type: 'array' } },
      },
    },
  };
  app.get(
    GRAPHQL_PATH,
    {
      schema: {
        ...routeSchema,
        operationId: 'queryGraphQL',
        summary: 'GraphQL API of the control plane: a query in the URL',
        response: {
          ...routeSchema.response,
          303: {
            description:
              'A browser opening the page (Accept names text/html and no JSON type): to the ' +
              "console's GraphiQL at /console/graphiql, with the same query string.",
            type: 'null',
          },
        },
      },
    },
    handler,
  );
  app.post(
    GRAPHQL_PATH,
    {
      schema: {
        ...routeSchema,
        operationId: 'executeGraphQL',
        summary: 'GraphQL API of the control plane: queries and mutations',
      },
    },
    handler,
  );

  // graphql-ws. The presented key is kept per socket and authenticated again on each subscribe,
  // so a key revoked while connected cannot start new subscriptions; the watch closes the socket
  // of a key that expires or is revoked while its subscriptions stream.
  const presented = new WeakMap<WebSocket, string | undefined>();
  const socketKeys = new SocketKeys(authenticate);
  const stopRechecks = dependencies.onKeysChanged?.(() => socketKeys.recheck());
  const stopRevocationWatch = followEvents(
    dependencies.events,
    EVENT_TYPES.API_KEY_REVOKED,
    (event) => {
      socketKeys.closeKey(event.apiKey.id);
      // A revocation made by another process: refuse the key here too without waiting for the
      // configuration poll (in the revoking process this coalesces with its own publication).
      dependencies.publisher.publishNow().catch((error: unknown) => {
        logger.warn({ err: error }, 'snapshot after an API key revocation failed');
      });
    },
    (error) => logger.error({ err: error }, 'API key revocation watch failed'),
  );
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_WS_MESSAGE_BYTES });
  const wsServer = useServer(
    {
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      onConnect(ctx) {
        const header = authorizationOf(ctx.connectionParams, ctx.extra.request);
        let caller: Caller;
        try {
          caller = authenticate(header);
        } catch {
          ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized: invalid API key');
          return false;
        }
        presented.set(ctx.extra.socket, header);
        socketKeys.watch(ctx.extra.socket, header, caller);
        return true;
      },
      async onSubscribe(ctx, _id, payload) {
        let caller: Caller;
        try {
          caller = authenticate(presented.get(ctx.extra.socket));
        } catch (error) {
          ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized: invalid API key');
          const refused =
            error instanceof GatewayError
              ? error
              : gatewayError('AUTH_INVALID_API_KEY', { problem: 'invalid API key' });
          return [toGraphQLError(refused)];
        }
        const enveloped = yoga.getEnveloped({ req: ctx.extra.request, caller, params: payload });
        let document: ExecutionArgs['document'];
        try {
          // Validation rules may throw (the depth limit does) instead of reporting.
          document = enveloped.parse(payload.query);
          const errors = enveloped.validate(
            enveloped.schema,
            document,
            introspection ? undefined : RULES_WITHOUT_INTROSPECTION,
          );
          if (errors.length > 0) return errors;
        } catch (error) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        return {
          schema: enveloped.schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: await enveloped.contextFactory(),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
        };
      },
    },
    wss,
  );
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (pathOf(request.url) !== GRAPHQL_PATH) {
      // Nothing else here speaks WebSocket: refuse rather than leave the socket hanging.
      if (app.server.listenerCount('upgrade') === 1) socket.destroy();
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  };
  app.server.on('upgrade', onUpgrade);
  app.addHook('preClose', async () => {
    app.server.off('upgrade', onUpgrade);
    stopRechecks?.();
    await stopRevocationWatch();
    await wsServer.dispose(); // closes every socket (1001 Going away), then the server
  });
}

type Enveloped = ReturnType<ReturnType<typeof createYoga>['getEnveloped']>;

/** `connectionParams.authorization` (any case), else the upgrade request's header. */
function authorizationOf(
  params: Readonly<Record<string, unknown>> | undefined,
  request: IncomingMessage,
): string | undefined {
  const value = params?.authorization ?? params?.Authorization;
  return typeof value === 'string' ? value : request.headers.authorization;
}

function pathOf(url: string | undefined): string {
  const end = url?.indexOf('?') ?? -1;
  return url === undefined ? '' : end === -1 ? url : url.slice(0, end);
}
