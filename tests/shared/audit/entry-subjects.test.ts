// Who an audit entry names, read from what each writer records (docs/audit.md): the agent of
// inspect, approval and credential entries, the actor of operator, OAuth client, agent and CLI
// entries, and the resource when it is of a kind with a name.
import { describe, expect, it } from 'vitest';
import {
  auditEntryActor,
  auditEntryAgent,
  auditEntryResource,
} from '../../../shared/audit/entry-subjects.js';

const entry = (resourceType: string, resourceId: string, metadata: unknown) => ({
  resourceType,
  resourceId,
  metadata,
});

describe('auditEntryAgent', () => {
  it('is the resource when it is an agent, else metadata.agentId', () => {
    expect(auditEntryAgent(entry('agent', 'a1', { actorType: 'agent' }))).toEqual({
      kind: 'agent',
      id: 'a1',
    });
    expect(auditEntryAgent(entry('approval', 'p1', { agentId: 'a2' }))).toEqual({
      kind: 'agent',
      id: 'a2',
    });
  });

  it('is null for a body without an agent, or an entry about no agent', () => {
    expect(auditEntryAgent(entry('agent', 'unknown', { reasonCode: 'MCP_MALFORMED_RPC' }))).toBe(
      null,
    );
    expect(auditEntryAgent(entry('tenant', 't1', { actorType: 'system' }))).toBe(null);
    expect(auditEntryAgent(entry('approval', 'p1', { agentId: 42 }))).toBe(null);
    expect(auditEntryAgent(entry('approval', 'p1', null))).toBe(null);
  });
});

describe('auditEntryActor', () => {
  it('reads an operator key from actor or decidedBy', () => {
    const key = { kind: 'api_key', id: 'k1' };
    expect(
      auditEntryActor(entry('agent', 'a1', { actorType: 'operator', actor: 'api_key:k1' })),
    ).toEqual(key);
    expect(auditEntryActor(entry('approval', 'p1', { decidedBy: 'api_key:k1' }))).toEqual(key);
  });

  it('reads an OAuth client, a CLI command and the agent itself', () => {
    expect(
      auditEntryActor(entry('access_token', 'j1', { actorType: 'oauth_client', actor: 'c1' })),
    ).toEqual({ kind: 'oauth_client', id: 'c1' });
    expect(
      auditEntryActor(
        entry('api_key', 'k2', { actorType: 'operator', actor: 'cli:admin-key reset' }),
      ),
    ).toEqual({ kind: 'cli', id: 'admin-key reset' });
    expect(auditEntryActor(entry('agent', 'a1', { actorType: 'agent' }))).toEqual({
      kind: 'agent',
      id: 'a1',
    });
  });

  it('names nobody for the gateway itself', () => {
    expect(auditEntryActor(entry('tenant', 't1', { actorType: 'system' }))).toBe(null);
    expect(auditEntryActor(entry('tenant', 't1', {}))).toBe(null);
  });
});

describe('auditEntryResource', () => {
  it('is the resource when it is an agent, API key or OAuth client', () => {
    expect(auditEntryResource(entry('api_key', 'k1', {}))).toEqual({ kind: 'api_key', id: 'k1' });
    expect(auditEntryResource(entry('oauth_client', 'c1', {}))).toEqual({
      kind: 'oauth_client',
      id: 'c1',
    });
    expect(auditEntryResource(entry('mcp_server', 'files', {}))).toBe(null);
    expect(auditEntryResource(entry('agent', 'unknown', {}))).toBe(null);
  });
});
