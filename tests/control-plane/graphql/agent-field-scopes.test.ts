// Field-level scopes of Agent (issue 22, item 3), over real HTTP and a real graphql-ws client
// against a real gateway, on both databases. An agent is reached from many roots (an approval, an
// OAuth client, a credential, an agent event, a spawn), each with its own scope; the agent's
// configuration (system prompt, persona, tools, audiences, execution mode, credentials) needs
// agents:manage wherever it is reached, and answers null with AUTH_INSUFFICIENT_SCOPE at exactly
// its path otherwise, while who the agent is stays readable. The paths into Agent and the roots
// that reach it are derived from the printed schema: a path added later fails this test until a
// case below walks it.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type GraphQLType,
  getNamedType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  parse,
  type SelectionSetNode,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SCHEMA_FILE } from '../../../control-plane/graphql/print-schema.js';
import { schema as runtimeSchema } from '../../../control-plane/graphql/schema/index.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { HOLD_POLICY } from '../../support/npl-policies.js';
import { type GraphQLAnswer, graphql, type Loose } from './support.js';

/**
 * Who the agent is, its kill, and what its usage limits counted (docs/limits.md: an approver of a
 * call a limit held reads it): readable by every key that reaches the agent.
 */
const PUBLIC_FIELDS = [
  'id',
  'name',
  'role',
  'status',
  'did',
  'publicKey',
  'createdAt',
  'updatedAt',
  'killedAt',
  'killedReason',
  'kill',
  'parent',
  'usage',
] as const;

/** The agent's configuration and credentials: agents:manage only, null otherwise. */
const MANAGE_FIELDS = [
  'systemPrompt',
  'personaTone',
  'personaLanguage',
  'allowedTools',
  'mcpAudiences',
  'executionMode',
  'identityCredentials',
] as const;

const printed = buildSchema(readFileSync(SCHEMA_FILE, 'utf8'));
const agentType = printed.getType('Agent') as GraphQLObjectType;

/** Every `Type.field` of the printed schema whose type is Agent (or a list of it). */
function pathsIntoAgent(schema: GraphQLSchema): Set<string> {
  const paths = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (getNamedType(field.type) === agentType) paths.add(`${type.name}.${field.name}`);
    }
  }
  return paths;
}

/** Every root field (`Query.x`, `Mutation.x`, `Subscription.x`) whose answer can hold an Agent. */
function rootsReachingAgent(schema: GraphQLSchema): Set<string> {
  const reaching = (type: GraphQLType, seen: Set<string>): boolean => {
    const named = getNamedType(type);
    if (named === agentType) return true;
    if (!isObjectType(named) || seen.has(named.name)) return false;
    seen.add(named.name);
    return Object.values(named.getFields()).some((field) => reaching(field.type, seen));
  };
  const roots = new Set<string>();
  for (const root of [
    schema.getQueryType(),
    schema.getMutationType(),
    schema.getSubscriptionType(),
  ]) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      if (reaching(field.type, new Set())) roots.add(`${root?.name}.${field.name}`);
    }
  }
  return roots;
}

/** The `Type.field` paths into Agent an operation walks, and its root field. */
function walkedBy(document: DocumentNode): { root: string; paths: Set<string> } {
  const info = new TypeInfo(printed);
  const paths = new Set<string>();
  let root = '';
  visit(
    document,
    visitWithTypeInfo(info, {
      Field() {
        const parent = info.getParentType();
        const field = info.getFieldDef();
        if (!parent || !field) return;
        if (root === '') root = `${parent.name}.${field.name}`;
        if (getNamedType(field.type) === agentType) paths.add(`${parent.name}.${field.name}`);
      },
    }),
  );
  return { root, paths };
}

/** Every field of Agent, with `parent` one level deep (so Agent.parent is walked too). */
function agentSelection(depth: number): string {
  const sub: Record<string, string> = {
    identityCredentials: '(first: 5) { edges { node { id agent { id name } } } }',
    kill: ' { killId reason }',
    usage: ' { limitId used max }',
  };
  return Object.keys(agentType.getFields())
    .sort()
    .filter((name) => name !== 'parent' || depth > 0)
    .map((name) =>
      name === 'parent' ? `parent { ${agentSelection(depth - 1)} }` : name + (sub[name] ?? ''),
    )
    .join(' ');
}
const AGENT = agentSelection(1);

type Path = readonly (string | number)[];

/**
 * Every Agent object of an answer, with its path: the answer walked along the operation's
 * selection (no fragments here), as graphql-js builds it.
 */
function agentsIn(
  document: DocumentNode,
  data: unknown,
): { path: Path; via: string; agent: Loose }[] {
  const found: { path: Path; via: string; agent: Loose }[] = [];
  const operation = document.definitions[0];
  if (operation?.kind !== Kind.OPERATION_DEFINITION) return found;
  const rootType = {
    query: printed.getQueryType(),
    mutation: printed.getMutationType(),
    subscription: printed.getSubscriptionType(),
  }[operation.operation] as GraphQLObjectType;
  const walkValue = (
    value: unknown,
    type: GraphQLType,
    selection: SelectionSetNode | undefined,
    path: Path,
    via: string,
  ) => {
    if (value === null || value === undefined) return;
    const nullable = isNonNullType(type) ? type.ofType : type;
    if (isListType(nullable)) {
      (value as unknown[]).forEach((item, index) => {
        walkValue(item, nullable.ofType, selection, [...path, index], via);
      });
      return;
    }
    if (!isObjectType(nullable) || selection === undefined) return;
    if (nullable === agentType) found.push({ path, via, agent: value });
    walkSelection(value as Record<string, unknown>, nullable, selection, path);
  };
  const walkSelection = (
    object: Record<string, unknown>,
    type: GraphQLObjectType,
    selection: SelectionSetNode,
    path: Path,
  ) => {
    for (const node of selection.selections as FieldNode[]) {
      const key = node.alias?.value ?? node.name.value;
      const field = type.getFields()[node.name.value] as GraphQLField<unknown, unknown>;
      walkValue(
        object[key],
        field.type,
        node.selectionSet,
        [...path, key],
        `${type.name}.${field.name}`,
      );
    }
  };
  walkSelection((data ?? {}) as Record<string, unknown>, rootType, operation.selectionSet, []);
  return found;
}

/** Whether a key with `scopes` passes the root field's own authScopes (from the built schema). */
function rootAllows(root: string, scopes: readonly string[]): boolean {
  const [typeName, fieldName] = root.split('.') as [string, string];
  const type = runtimeSchema.getType(typeName) as GraphQLObjectType;
  const options = type.getFields()[fieldName]?.extensions?.pothosOptions as {
    authScopes?: { scope?: string; anyScope?: readonly string[] };
  };
  const needed = options.authScopes;
  if (needed?.scope !== undefined) return scopes.includes(needed.scope);
  if (needed?.anyScope !== undefined) return needed.anyScope.some((s) => scopes.includes(s));
  throw new Error(`${root} declares no authScopes`);
}

interface Case {
  readonly document: string;
  /** Variables for one run (a fresh approval to decide, a client to revoke…). */
  readonly variables?: () => Promise<Record<string, unknown>>;
  /** For a subscription: what makes it deliver an event, once it is live. */
  readonly trigger?: () => Promise<void>;
}

/** The expected values of the fields the operation selected on `agent`. */
function selected(agent: Record<string, unknown>, expected: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(expected).filter(([name]) => name in agent));
}

const pathKey = (path: Path | undefined) => (path ?? []).join('.');

describeEachDatabase('Agent field scopes', (kind) => {
  let gw: TestGateway;
  let admin: string;
  let parentId: string;
  let childId: string;
  const clients: Client[] = [];
  const SECRET_PROMPT = 'You are the payroll agent; the vault PIN is 4417.';
  const KEYS: Record<string, readonly string[]> = {
    auditor: [SCOPES.AUDIT_READ],
    approver: [SCOPES.APPROVALS_DECIDE],
    // With approvals:decide too, so that it reaches agents through approvals as well.
    manager: [SCOPES.AGENTS_MANAGE, SCOPES.APPROVALS_DECIDE],
  };
  const keys: Record<string, string> = {};
  /** The paths into Agent along which each key read an agent (`Type.field`). */
  const reached: Record<string, Set<string>> = Object.fromEntries(
    Object.keys(KEYS).map((name) => [name, new Set<string>()]),
  );
  const asAdmin = (query: string, variables?: Record<string, unknown>) =>
    graphql<Record<string, Loose>>(gw.url, admin, query, variables);

  const spawn = async (input: Record<string, unknown>) => {
    const answer = await asAdmin(
      'mutation($input: SpawnAgentInput!) { spawnAgent(input: $input) { agent { id } } }',
      { input: spawnInput(input) },
    );
    expect(answer.errors).toBeUndefined();
    return answer.data?.spawnAgent.agent.id as string;
  };
  const spawnInput = (input: Record<string, unknown> = {}) => ({
    name: `payroll-${Math.random().toString(36).slice(2, 8)}`,
    systemPrompt: SECRET_PROMPT,
    persona: { tone: 'terse', language: 'en' },
    allowedTools: ['write'],
    mcpAudiences: ['mcp://files'],
    ...input,
  });
  /** Holds a call of the child agent for a human: a fresh pending approval. */
  const hold = async () => {
    const held = await gw.inspect(inspectBody(childId, { tool: 'write', args: { n: 1 } }));
    expect(held.status).toBe(202);
    return (held.body.approval as { id: string }).id;
  };
  const registerClient = async () => {
    const answer = await asAdmin(
      'mutation($agentId: ID!) { registerOAuthClient(input: { agentId: $agentId }) { client { id } } }',
      { agentId: childId },
    );
    expect(answer.errors).toBeUndefined();
    return answer.data?.registerOAuthClient.client.id as string;
  };
  const issueCredential = async () => {
    const answer = await asAdmin(
      'mutation($agentId: ID!) { issueAgentCredential(agentId: $agentId, supervisingUserId: "ops") { id } }',
      { agentId: childId },
    );
    expect(answer.errors).toBeUndefined();
    return answer.data?.issueAgentCredential.id as string;
  };

  /** One case per root that reaches an Agent (the test below checks none is missing). */
  const CASES: Record<string, Case> = {
    'Query.approvals': {
      document: `query($agentId: ID) { approvals(agentId: $agentId, first: 2) { edges { node { id agent { ${AGENT} } } } } }`,
      variables: async () => ({ agentId: childId }),
    },
    'Query.approval': {
      document: `query($id: ID!) { approval(id: $id) { agent { ${AGENT} } } }`,
      variables: async () => ({ id: await hold() }),
    },
    'Mutation.approveApproval': {
      document: `mutation($id: ID!) { approveApproval(id: $id, reason: "ok") { status agent { ${AGENT} } } }`,
      variables: async () => ({ id: await hold() }),
    },
    'Mutation.rejectApproval': {
      document: `mutation($id: ID!) { rejectApproval(id: $id, reason: "no") { status agent { ${AGENT} } } }`,
      variables: async () => ({ id: await hold() }),
    },
    'Subscription.approvalQueue': {
      document: `subscription($agentId: ID) { approvalQueue(agentId: $agentId) { kind approval { agent { ${AGENT} } } } }`,
      variables: async () => ({ agentId: childId }),
      trigger: async () => {
        await hold();
      },
    },
    'Subscription.agentEvents': {
      document: `subscription { agentEvents(change: SPAWNED) { change agent { ${AGENT} } } }`,
      trigger: async () => {
        await spawn({ parentAgentId: parentId });
      },
    },
    'Query.agent': {
      document: `query($id: ID!) { agent(id: $id) { ${AGENT} } }`,
      variables: async () => ({ id: childId }),
    },
    'Query.agents': {
      document: `{ agents(first: 3) { edges { node { ${AGENT} } } } }`,
    },
    'Query.oauthClients': {
      document: `{ oauthClients(first: 2) { edges { node { id agent { ${AGENT} } } } } }`,
    },
    'Mutation.registerOAuthClient': {
      document: `mutation($agentId: ID!) { registerOAuthClient(input: { agentId: $agentId }) { client { agent { ${AGENT} } } } }`,
      variables: async () => ({ agentId: childId }),
    },
    'Mutation.revokeOAuthClient': {
      document: `mutation($clientId: ID!) { revokeOAuthClient(clientId: $clientId) { agent { ${AGENT} } } }`,
      variables: async () => ({ clientId: await registerClient() }),
    },
    'Mutation.issueAgentCredential': {
      document: `mutation($agentId: ID!) { issueAgentCredential(agentId: $agentId, supervisingUserId: "ops") { agent { ${AGENT} } } }`,
      variables: async () => ({ agentId: childId }),
    },
    'Mutation.revokeAgentCredential': {
      document: `mutation($id: ID!) { revokeAgentCredential(id: $id, reason: "rotated") { agent { ${AGENT} } } }`,
      variables: async () => ({ id: await issueCredential() }),
    },
    'Mutation.createAgent': {
      document: `mutation($input: CreateAgentInput!) { createAgent(input: $input) { ${AGENT} } }`,
      variables: async () => ({
        input: {
          name: 'created',
          publicKey: newAgentPublicKey(),
          allowedTools: ['write'],
          systemPrompt: SECRET_PROMPT,
        },
      }),
    },
    'Mutation.updateAgent': {
      document: `mutation($id: ID!) { updateAgent(id: $id, input: { executionMode: "shadow" }) { ${AGENT} } }`,
      variables: async () => ({ id: childId }),
    },
    'Mutation.spawnAgent': {
      document: `mutation($input: SpawnAgentInput!) { spawnAgent(input: $input) { agent { ${AGENT} } } }`,
      variables: async () => ({ input: spawnInput({ parentAgentId: parentId }) }),
    },
  };

  /** What a refused operation must not have changed: every row it could write. */
  const writes = async () => {
    const prisma = gw.db.prisma;
    const tenantId = gw.tenant.id;
    return JSON.stringify([
      await prisma.agent.findMany({
        where: { tenantId },
        select: { id: true, updatedAt: true, executionMode: true, status: true },
        orderBy: { id: 'asc' },
      }),
      await prisma.oAuthClient.findMany({
        where: { tenantId },
        select: { id: true, revokedAt: true },
        orderBy: { id: 'asc' },
      }),
      await prisma.identityCredential.findMany({
        where: { tenantId },
        select: { id: true, revokedAt: true },
        orderBy: { id: 'asc' },
      }),
      await prisma.approval.findMany({
        where: { tenantId },
        select: { id: true, status: true },
        orderBy: { id: 'asc' },
      }),
    ]);
  };

  /** Runs a case as `key`: over HTTP, or over graphql-ws up to its first event or refusal. */
  const run = async (
    root: string,
    key: string,
    variables: Record<string, unknown>,
  ): Promise<Pick<GraphQLAnswer<Record<string, Loose>>, 'data' | 'errors'>> => {
    const item = CASES[root] as Case;
    if (item.trigger === undefined) return graphql(gw.url, key, item.document, variables);
    const client = createClient({
      url: `${gw.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${key}` },
      retryAttempts: 0,
    });
    clients.push(client);
    const subscribers = gw.runtime.events.subscriberCount;
    const result = new Promise<Loose>((resolve) => {
      const stop = client.subscribe(
        { query: item.document, variables },
        {
          next: (value) => {
            resolve(value);
            stop();
          },
          error: (error) => resolve({ data: null, errors: error }),
          complete: () => resolve({ data: null, errors: [] }),
        },
      );
    });
    // Live on the server (one more bus subscriber) or refused: only then trigger the event.
    const live = await Promise.race([
      result.then(() => false),
      until(() => gw.runtime.events.subscriberCount > subscribers).then(() => true),
    ]);
    if (live) await item.trigger();
    return result;
  };

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    gw.runtime.keyCustody.useMasterKey(randomBytes(32), 'the test master key');
    admin = await gw.addApiKey(gw.tenant.id, [
      SCOPES.AGENTS_MANAGE,
      SCOPES.APPROVALS_DECIDE,
      SCOPES.POLICIES_MANAGE,
    ]);
    for (const [name, scopes] of Object.entries(KEYS)) {
      keys[name] = await gw.addApiKey(gw.tenant.id, [...scopes]);
    }
    await gw.registerServer({
      tenantId: gw.tenant.id,
      serverId: 'files',
      url: 'http://127.0.0.1:9/mcp',
      mockResults: { write: { ok: 1 } },
    });
    await gw.setPolicy(gw.tenant.id, { trustedServers: ['files'], exfilDetectSecrets: false });
    const uri = await gw.publishPolicy(gw.tenant.id, HOLD_POLICY);
    expect(
      (await asAdmin('mutation($uri: String!) { pinNplPolicy(uri: $uri) }', { uri })).errors,
    ).toBeUndefined();
    parentId = await spawn({ allowedTools: ['write', 'read'] });
    childId = await spawn({ parentAgentId: parentId });
    await hold();
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await gw?.close();
  });

  it('classifies every field of Agent, and the agents:manage ones are nullable in the schema', () => {
    expect(Object.keys(agentType.getFields()).sort()).toEqual(
      [...PUBLIC_FIELDS, ...MANAGE_FIELDS].sort(),
    );
    for (const name of MANAGE_FIELDS) {
      expect(isNonNullType(agentType.getFields()[name]?.type), name).toBe(false);
    }
  });

  it('every field of an object with a scope of its own is nullable, so a refusal nulls only it', () => {
    const scoped: string[] = [];
    for (const type of Object.values(runtimeSchema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      if (['Query', 'Mutation', 'Subscription'].includes(type.name)) continue;
      for (const field of Object.values(type.getFields())) {
        if ((field.extensions?.pothosOptions as { authScopes?: unknown })?.authScopes) {
          scoped.push(`${type.name}.${field.name}`);
          expect(isNonNullType(field.type), `${type.name}.${field.name}`).toBe(false);
        }
      }
    }
    expect(scoped).toEqual(
      expect.arrayContaining([
        ...MANAGE_FIELDS.map((name) => `Agent.${name}`),
        'Approval.arguments',
      ]),
    );
  });

  it('walks every path into Agent of the printed schema, from every root that reaches one', () => {
    const walked = Object.entries(CASES).map(([root, item]) => {
      const { root: actual, paths } = walkedBy(parse(item.document));
      expect(actual).toBe(root);
      return paths;
    });
    const covered = new Set(walked.flatMap((paths) => [...paths]));
    expect([...covered].sort()).toEqual([...pathsIntoAgent(printed)].sort());
    expect(Object.keys(CASES).sort()).toEqual([...rootsReachingAgent(printed)].sort());
    // The walk covers what the issue names, whatever the derivation finds.
    for (const path of [
      'Approval.agent',
      'IdentityCredential.agent',
      'OAuthClient.agent',
      'AgentEvent.agent',
      'Agent.parent',
    ]) {
      expect(covered).toContain(path);
    }
  });

  for (const keyName of Object.keys(KEYS)) {
    describe(`with a ${KEYS[keyName]?.join(' + ')} key (${keyName})`, () => {
      const scopes = KEYS[keyName] as readonly string[];
      const manages = scopes.includes(SCOPES.AGENTS_MANAGE);

      for (const root of Object.keys(CASES)) {
        const allowed = rootAllows(root, scopes);
        const title = !allowed
          ? `${root}: refused at the root with AUTH_INSUFFICIENT_SCOPE, nothing written`
          : manages
            ? `${root}: every field of every agent, as stored`
            : `${root}: who the agent is; its configuration null with AUTH_INSUFFICIENT_SCOPE at exactly its paths`;
        it(title, async () => {
          const item = CASES[root] as Case;
          const variables = (await item.variables?.()) ?? {};
          const before = await writes();
          const answer = await run(root, keys[keyName] as string, variables);
          const errors = [...(answer.errors ?? [])] as Loose[];

          if (!allowed) {
            expect(errors.map((error) => error.extensions?.code)).toEqual([
              'AUTH_INSUFFICIENT_SCOPE',
            ]);
            if (item.trigger === undefined) {
              expect(errors.map((error) => pathKey(error.path))).toEqual([root.split('.')[1]]);
              expect(await writes()).toBe(before);
            }
            expect(JSON.stringify(answer)).not.toContain(SECRET_PROMPT);
            return;
          }

          const document = parse(item.document);
          const agents = agentsIn(document, answer.data);
          expect(agents.length).toBeGreaterThan(0);
          for (const { via } of agents) reached[keyName]?.add(via);
          const rows = await gw.db.prisma.agent.findMany({
            where: { id: { in: agents.map(({ agent }) => agent.id) } },
          });
          const byId = new Map(rows.map((row) => [row.id, row]));
          for (const { agent } of agents) {
            const row = byId.get(agent.id);
            expect(row).toBeDefined();
            expect(agent).toMatchObject(
              selected(agent, {
                name: row?.name,
                role: row?.role,
                status: row?.status,
                publicKey: row?.publicKey,
                did: `did:key:${row?.publicKey}`,
                createdAt: row?.createdAt.toISOString(),
                killedReason: row?.killedReason,
              }),
            );
          }

          if (manages) {
            expect(errors).toEqual([]);
            for (const { agent } of agents) {
              const row = byId.get(agent.id);
              expect(agent).toMatchObject(
                selected(agent, {
                  systemPrompt: row?.systemPrompt,
                  personaTone: row?.personaTone,
                  personaLanguage: row?.personaLanguage,
                  allowedTools: row?.allowedTools,
                  mcpAudiences: row?.mcpAudiences,
                  executionMode: row?.executionMode,
                }),
              );
              if (!('identityCredentials' in agent)) continue;
              for (const edge of agent.identityCredentials.edges) {
                expect(edge.node.agent.id).toBe(agent.id);
              }
            }
            return;
          }

          for (const { agent } of agents) {
            for (const name of MANAGE_FIELDS)
              if (name in agent) expect(agent[name], name).toBeNull();
          }
          const expected = agents.flatMap(({ path, agent }) =>
            MANAGE_FIELDS.filter((name) => name in agent).map((name) => pathKey([...path, name])),
          );
          expect(errors.map((error) => pathKey(error.path)).sort()).toEqual(expected.sort());
          for (const error of errors) {
            expect(error.extensions?.code).toBe('AUTH_INSUFFICIENT_SCOPE');
            expect(error.message).toContain(SCOPES.AGENTS_MANAGE);
          }
          expect(JSON.stringify(answer)).not.toContain(SECRET_PROMPT);
        });
      }
    });
  }

  it('the walk read agents along every path into Agent, and the auditor along those it may reach', () => {
    expect([...(reached.manager ?? [])].sort()).toEqual([...pathsIntoAgent(printed)].sort());
    // An auditor reaches agents through approvals only, and no further than their parents: an
    // agent's credentials (and so IdentityCredential.agent) are behind agents:manage.
    expect([...(reached.auditor ?? [])].sort()).toEqual(['Agent.parent', 'Approval.agent']);
    expect([...(reached.approver ?? [])].sort()).toEqual(['Agent.parent', 'Approval.agent']);
  });

  it("the auditor's approval list as the console reads it (agent { id name }) answers without an error", async () => {
    const answer = await graphql<Record<string, Loose>>(
      gw.url,
      keys.auditor,
      '{ approvals(first: 5) { edges { node { id agent { id name } } } } }',
    );
    expect(answer.errors).toBeUndefined();
    const agents = answer.data?.approvals.edges.map((edge: Loose) => edge.node.agent);
    expect(agents.length).toBeGreaterThan(0);
    expect(agents.every((agent: Loose) => typeof agent.id === 'string' && agent.name)).toBe(true);
  });

  it("an auditor asking for an approval's raw arguments gets null there, and the rest of the approval", async () => {
    const id = await hold();
    const answer = await graphql<Record<string, Loose>>(
      gw.url,
      keys.auditor,
      'query($id: ID!) { approval(id: $id) { id arguments maskedArguments agent { id name } } }',
      { id },
    );
    expect(answer.data?.approval).toEqual({
      id,
      arguments: null,
      maskedArguments: { n: 1 },
      agent: { id: childId, name: expect.any(String) },
    });
    expect(answer.errors?.map((error) => [pathKey(error.path), error.extensions?.code])).toEqual([
      [`approval.arguments`, 'AUTH_INSUFFICIENT_SCOPE'],
    ]);
    expect(answer.errors?.[0]?.message).toContain(SCOPES.APPROVALS_DECIDE);
  });

  it('the kill of an agent stays readable to the auditor through its rejected approvals', async () => {
    const victim = await spawn({ parentAgentId: parentId });
    const held = await gw.inspect(inspectBody(victim, { tool: 'write' }));
    expect(held.status).toBe(202);
    const approvalId = (held.body.approval as { id: string }).id;
    const killer = await gw.addApiKey(gw.tenant.id, [SCOPES.AGENTS_KILL]);
    const kill = await graphql<Record<string, Loose>>(
      gw.url,
      killer,
      'mutation($id: ID!) { killAgent(agentId: $id, reason: "leaked prompt") { killId } }',
      { id: victim },
    );
    expect(kill.errors).toBeUndefined();
    const answer = await graphql<Record<string, Loose>>(
      gw.url,
      keys.auditor,
      'query($id: ID!) { approval(id: $id) { status agent { id status killedReason killedAt kill { killId reason } } } }',
      { id: approvalId },
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.approval).toMatchObject({
      status: 'REJECTED',
      agent: {
        id: victim,
        status: 'killed',
        killedReason: 'leaked prompt',
        kill: { killId: kill.data?.killAgent.killId, reason: 'leaked prompt' },
      },
    });
  });
});

/** Polls `check` until it holds; the bound only ends a run that would otherwise hang. */
async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
