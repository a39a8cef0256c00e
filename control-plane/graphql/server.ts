// The GraphQL API at /graphql (GET and POST): graphql-yoga inside Fastify, over the Pothos schema.
// Per request: the API key authenticated once, before GraphQL (401 without a valid one), CSRF
// prevention (a simple request must carry a custom header), depth and cost limits checked at
// validation, introspection only when switched on, and error masking (errors.ts): only
// deliberate errors with a registry code reach clients.
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
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
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
}

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
  const { db, audit, store, publisher, approvals } = options;
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
    context: ({ req }) => ({
      db,
      audit,
      store,
      publisher,
      approvals,
      caller: callers.get(req) ?? authenticateCaller(req.headers.authorization, store),
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
}
