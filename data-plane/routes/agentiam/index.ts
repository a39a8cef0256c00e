// AgentIAM on the data plane (DESIGN.md §6, §6a): every data plane serves, from its snapshot,
// what verifiers need — DID resolution (GET /1.0/identifiers/{did}), the JSON-LD contexts
// (GET /contexts/{file}) and the signed status lists (GET /api/v1/agentiam/status-lists/{id}),
// all public — and verifies delegation chains for agents (POST /api/v1/agentiam/delegation/verify,
// agents:execute). Issuing and revoking are the control plane's.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { errorBodySchema } from '../../../http-edge/errors.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import type { IdentityVerifier } from '../../agentiam/identity-verifier.js';
import { VERIFY_BODY_LIMIT_BYTES } from '../../agentiam/limits.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import { toRouteSchema } from '../compliance/route-schema.js';
import {
  DELEGATION_VERIFY_DOCS,
  DELEGATION_VERIFY_PATH,
  verifyAnswerSchema,
  verifyBodySchema,
  verifyBodyValidator,
  verifyDelegation,
} from './delegation-verify.js';
import { DID_RESOLVER_PATH, resolveDid } from './did-resolver.js';
import {
  CONTEXT_PATH,
  STATUS_LIST_PATH,
  serveContext,
  serveStatusList,
} from './public-documents.js';

export interface AgentIamRoutesDependencies {
  readonly store: SnapshotStore;
  readonly identity: IdentityVerifier;
}

export const agentIamRoutes = fastifyPlugin(registerAgentIamRoutes, {
  name: 'agent-gateway-agentiam',
  dependencies: ['agent-gateway-errors', 'agent-gateway-auth'],
  encapsulate: true,
});

const documentParams = (name: string, description: string) => ({
  type: 'object',
  properties: { [name]: { type: 'string', description } },
  required: [name],
});

/**
 * OpenAPI answers of a public document route. Bodies are sent as pre-rendered bytes (their ETag
 * is computed once per snapshot), so these schemas document and never serialize.
 */
const documentResponses = (description: string, mediaTypes: readonly string[]) => ({
  200: {
    description,
    content: Object.fromEntries(
      mediaTypes.map((type) => [type, { schema: { type: 'object', additionalProperties: true } }]),
    ),
  },
  304: { description: 'Not modified: the If-None-Match ETag is current.', type: 'null' },
});

async function registerAgentIamRoutes(
  app: FastifyInstance,
  deps: AgentIamRoutesDependencies,
): Promise<void> {
  app.get(
    DID_RESOLVER_PATH,
    {
      schema: {
        operationId: 'resolveDid',
        summary:
          'Resolve a did:svc (tenant CA) or did:key (agent) DID: DIF Universal Resolver HTTP binding, public.',
        params: documentParams('did', 'The DID, e.g. did:svc:<tenantId> or did:key:z6Mk…'),
        response: documentResponses(
          'The DID resolution result, or the bare DID document for Accept: application/did+ld+json.',
          [
            'application/ld+json;profile="https://w3id.org/did-resolution"',
            'application/did+ld+json',
          ],
        ),
      },
    },
    (request, reply) => resolveDid(deps.store, request, reply),
  );
  app.get(
    CONTEXT_PATH,
    {
      schema: {
        operationId: 'getJsonLdContext',
        summary: 'A JSON-LD context our credentials use (schema/contexts/), public.',
        params: documentParams('file', 'The file name, e.g. agentiam-v1.jsonld.'),
        response: {
          ...documentResponses('The JSON-LD context document.', ['application/ld+json']),
          404: errorBodySchema,
        },
      },
    },
    serveContext,
  );
  app.get(
    STATUS_LIST_PATH,
    {
      schema: {
        operationId: 'getStatusList',
        summary:
          "A tenant's signed revocation status list (BitstringStatusListCredential), public.",
        params: documentParams('id', 'The status list id (the last segment of its URL).'),
        response: {
          ...documentResponses('The signed BitstringStatusListCredential.', [
            'application/ld+json',
          ]),
          404: errorBodySchema,
        },
      },
    },
    (request, reply) => serveStatusList(deps.store, request, reply),
  );
  app.post(
    DELEGATION_VERIFY_PATH,
    {
      onRequest: app.requireScope(SCOPES.AGENTS_EXECUTE),
      bodyLimit: VERIFY_BODY_LIMIT_BYTES,
      config: { docs: DELEGATION_VERIFY_DOCS },
      schema: {
        operationId: 'verifyDelegationChain',
        summary: 'Verify a root credential and its delegation chain for a tool (spec §4.7).',
        body: toRouteSchema(verifyBodySchema, 'input'),
        response: { 200: verifyAnswerSchema, 400: errorBodySchema, 401: errorBodySchema },
      },
      validatorCompiler: verifyBodyValidator,
    },
    (request) => verifyDelegation(deps.identity, request),
  );
}
