// The GraphQL API at /graphql (GET and POST): graphql-yoga inside Fastify, over the Pothos schema.
// Per request: the API key authenticated once, before GraphQL (401 without a valid one), CSRF
// prevention (a simple request must carry a custom header), depth and cost limits checked at
// validation, introspection only when switched on, and error masking (errors.ts): only
// deliberate errors with a registry code reach clients.
// Subscriptions: graphql-ws (protocol graphql-transport-ws) on WebSocket upgrades of the same
// path. The key (connectionParams.authorization, else the upgrade's Authorization header) is
// checked on connect (close 4401 without a valid one) and again on every subscribe; operations
// run through yoga's envelop (`getEnveloped`), so the same limits, scopes and masking apply.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ExecutionArgs, GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { createYoga, type Plugin } from 'graphql-yoga';
import { type WebSocket, WebSocketServer } from 'ws';
import {
  authenticateCaller,
  type Caller,
  type GraphQLContext,
  type GraphQLDependencies,
} from './context.js';
import { maskError } from './errors.js';
import { schema } from './schema/index.js';

export const GRAPHQL_PATH = '/graphql';
/** Headers that let a request without a non-simple content type through CSRF prevention. */
export const CSRF_HEADERS = [
  'x-agent-gateway-csrf',
  'x-graphql-yoga-csrf',
  'apollo-require-preflight',
];
export const MAX_QUERY_DEPTH = 12;
export const MAX_QUERY_COST = 5000;
export const INTROSPECTION_ENV = 'AGENT_GATEWAY_GRAPHQL_INTROSPECTION';

export interface GraphQLPluginOptions extends GraphQLDependencies {
  /** Default: the environment switch, else on (every request needs a valid API key anyway). */
  readonly introspection?: boolean;
}

interface ServerContext {
  /** HTTP: the Fastify request; WebSocket: the upgrade request (then `caller` is set). */
  readonly req: FastifyRequest | IncomingMessage;
  readonly reply?: FastifyReply;
  readonly caller?: Caller;
}

/** Largest WebSocket message accepted (the same bound as an HTTP body). */
export const MAX_WS_MESSAGE_BYTES = 1024 * 1024;

/** `AGENT_GATEWAY_GRAPHQL_INTROSPECTION=false` (or 0/off/no) switches introspection off. */
export function introspectionFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[INTROSPECTION_ENV]?.trim().toLowerCase();
  return !(value === 'false' || value === '0' || value === 'off' || value === 'no');
}

function useNoIntrospection(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}

export async function graphqlPlugin(
  app: FastifyInstance,
  options: GraphQLPluginOptions,
): Promise<void> {
  const { db, audit, store, publisher, approvals, events } = options;
  const introspection = options.introspection ?? introspectionFromEnv();
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
      ...(introspection ? [] : [useNoIntrospection()]),
    ],
    context: ({ req, caller }) => ({
      db,
      audit,
      store,
      publisher,
      approvals,
      events,
      caller:
        caller ??
        callers.get(req as FastifyRequest) ??
        authenticateCaller(req.headers.authorization, store),
    }),
  });

  // Authenticated before GraphQL runs, so a request without a valid key costs no parsing.
  const callers = new WeakMap<FastifyRequest, Caller>();
  app.addHook('onRequest', async (req) => {
    callers.set(req, authenticateCaller(req.headers.authorization, store));
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
    summary: 'GraphQL API of the control plane (queries and mutations)',
    description:
      'GraphQL over HTTP; schema/schema.graphql is the schema and docs/graphql.md the guide. ' +
      'A GET, or a POST with a simple content type, must carry the x-agent-gateway-csrf header.',
  };
  app.get(GRAPHQL_PATH, { schema: routeSchema }, handler);
  app.post(GRAPHQL_PATH, { schema: routeSchema }, handler);

  // graphql-ws. The presented key is kept per socket and authenticated again on each subscribe,
  // so a key revoked while connected cannot start new subscriptions.
  const presented = new WeakMap<WebSocket, string | undefined>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_WS_MESSAGE_BYTES });
  const wsServer = useServer(
    {
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      onConnect(ctx) {
        const header = authorizationOf(ctx.connectionParams, ctx.extra.request);
        try {
          authenticateCaller(header, store);
        } catch {
          ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized: invalid API key');
          return false;
        }
        presented.set(ctx.extra.socket, header);
        return true;
      },
      async onSubscribe(ctx, _id, payload) {
        let caller: Caller;
        try {
          caller = authenticateCaller(presented.get(ctx.extra.socket), store);
        } catch {
          ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized: invalid API key');
          return [new GraphQLError('invalid API key')];
        }
        const enveloped = yoga.getEnveloped({ req: ctx.extra.request, caller, params: payload });
        let document: ExecutionArgs['document'];
        try {
          // Validation rules may throw (the depth limit does) instead of reporting.
          document = enveloped.parse(payload.query);
          const errors = enveloped.validate(enveloped.schema, document);
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
