// POST /api/v1/agentiam/credentials/issue (spec §4.6, scope agents:manage): issues an agent
// identity credential, the REST twin of the issueAgentCredential mutation. The body is
// snake_case, the answer camelCase (DESIGN.md §6). One zod schema is the contract: the route
// documents it in OpenAPI and enforces it without coercion, so `"ttl_seconds": "60"` is refused,
// not read as 60; a refusal is REQUEST_INVALID listing every wrong field, and nothing is written.
// Order (docs/agentiam.md#issue-a-credential): the API key (the composition's `authenticate`,
// the data plane's check against the snapshot) before the body is read; then the agent, when
// `agent_id` is well-formed, so an unknown agent is 404 NOT_FOUND with the agent hint whatever
// else is wrong; then the rest of the body.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isoSeconds } from '../../shared/agentiam/credentials.js';
import { UNSTORABLE_TEXT } from '../../shared/agents/agent-rules.js';
import { errorBodySchema } from '../../shared/errors/index.js';
import { SCOPES } from '../../shared/identity/scopes.js';
import type { PublicUrl } from '../../shared/public-url.js';
import { isStorableText } from '../../shared/text/storable-text.js';
import { compileBodyValidator } from '../../shared/validation/body-validator.js';
import type { Database } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import { actorOf, type Caller } from '../graphql/context.js';
import { SPAWN_RULES } from '../services/agent-spawn.js';
import {
  CREDENTIAL_TTL_SECONDS,
  issueIdentityCredential,
} from '../services/agentiam/credentials.js';
import type { KeyCustody } from '../services/agentiam/custody.js';
import { requireAgentOfTenant } from '../services/agents.js';
import type { SnapshotPublisher } from '../snapshot/publisher.js';
import { scopedCaller } from './scoped-caller.js';

export const CREDENTIALS_ISSUE_PATH = '/api/v1/agentiam/credentials/issue';
export const CREDENTIALS_ISSUE_DOCS = 'docs/agentiam.md#issue-a-credential';

export interface CredentialsIssueDependencies {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly keyCustody: KeyCustody;
  readonly publicUrl: PublicUrl;
  readonly publisher: Pick<SnapshotPublisher, 'publishNow'>;
  readonly authenticate: (authorization: string | undefined) => Caller;
}

const agentIdRule = z.string().min(1).max(256).refine(isStorableText, UNSTORABLE_TEXT);

const issueBodySchema = z
  .strictObject({
    agent_id: agentIdRule.describe('The agent receiving the credential (Agent.id).'),
    supervising_user_id: SPAWN_RULES.supervisingUserId
      .optional()
      .describe(
        'The user supervising the agent, as your identity system names them; written into the credential (left out when absent).',
      ),
    ttl_seconds: z
      .int()
      .min(CREDENTIAL_TTL_SECONDS.min)
      .max(CREDENTIAL_TTL_SECONDS.max)
      .optional()
      .describe(
        `Lifetime of the credential in seconds, ${CREDENTIAL_TTL_SECONDS.min} to ${CREDENTIAL_TTL_SECONDS.max} (30 days); default ${CREDENTIAL_TTL_SECONDS.default} (24 h).`,
      ),
  })
  .describe('Which agent gets a credential, who supervises it, and for how long.');

type IssueBody = z.infer<typeof issueBodySchema>;

const issueAnswerSchema = {
  type: 'object',
  description: 'The issued credential.',
  properties: {
    credential: {
      type: 'object',
      additionalProperties: true,
      description:
        'The W3C Verifiable Credential (data model 1.1, AgentIdentityCredential) with its Ed25519Signature2020 proof.',
    },
    credentialId: { type: 'string', description: 'Its id, `urn:uuid:…`.' },
    expiresAt: { type: 'string', description: 'Its expirationDate (ISO 8601, UTC).' },
    statusListCredential: {
      type: 'string',
      description: 'URL of the status-list credential holding its revocation entry.',
    },
  },
  required: ['credential', 'credentialId', 'expiresAt', 'statusListCredential'],
} as const;

export async function credentialsIssueRoutes(
  app: FastifyInstance,
  deps: CredentialsIssueDependencies,
): Promise<void> {
  // JSON only: a text/plain body is 415, not a string the schema then refuses.
  app.removeContentTypeParser('text/plain');
  const manager = scopedCaller(deps.authenticate, SCOPES.AGENTS_MANAGE);
  const { $schema: _dialect, ...bodyJsonSchema } = z.toJSONSchema(issueBodySchema, {
    target: 'draft-2020-12',
    io: 'input',
  });
  app.post<{ Body: IssueBody }>(
    CREDENTIALS_ISSUE_PATH,
    {
      onRequest: manager.onRequest,
      preValidation: async (request) => {
        const agentId = (request.body as { agent_id?: unknown } | null)?.agent_id;
        if (!agentIdRule.safeParse(agentId).success) return;
        const { tenantId } = manager.callerOf(request);
        await requireAgentOfTenant(deps.db, tenantId, agentId as string);
      },
      config: { docs: CREDENTIALS_ISSUE_DOCS },
      schema: {
        operationId: 'issueAgentCredential',
        summary: 'Issue an agent identity credential (W3C VC, revocable by status list).',
        body: bodyJsonSchema,
        response: {
          201: issueAnswerSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
          503: errorBodySchema,
        },
      },
      validatorCompiler: compileBodyValidator(issueBodySchema),
    },
    async (request, reply) => {
      const caller = manager.callerOf(request);
      const body = request.body;
      const issued = await issueIdentityCredential(
        { db: deps.db, custody: deps.keyCustody, publicUrl: deps.publicUrl, audit: deps.audit },
        {
          tenantId: caller.tenantId,
          agentId: body.agent_id,
          supervisingUserId: body.supervising_user_id,
          ttlSeconds: body.ttl_seconds,
          actor: actorOf(caller),
        },
      );
      if (issued.published) await deps.publisher.publishNow();
      return reply.code(201).send({
        credential: issued.credential,
        credentialId: issued.record.id,
        expiresAt: isoSeconds(issued.record.expiresAt),
        statusListCredential: issued.statusListCredential,
      });
    },
  );
}
