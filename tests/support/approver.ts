// A test approver as an operator console would be one: it subscribes to the GraphQL
// approvalQueue subscription over graphql-ws for one agent, and decides the first held call it
// sees with the approveApproval or rejectApproval mutation.
import { createClient } from 'graphql-ws';
import { WebSocket } from 'ws';
import { graphql } from '../control-plane/graphql/support.js';
import type { TestGateway } from './gateway.js';

const APPROVAL_QUEUE = `subscription($agentId: ID) {
  approvalQueue(status: PENDING, agentId: $agentId) { kind approval { id status toolName } }
}`;

export interface Approver {
  /** Resolves with the id of the approval it decided, once its mutation answered as expected. */
  readonly decided: Promise<string>;
  dispose(): Promise<void>;
}

/**
 * Starts the approver and resolves once its subscription is live on the gateway (the gateway
 * holds its event-bus subscription), so no held call is missed.
 */
export async function startApprover(
  gateway: TestGateway,
  adminKey: string,
  agentId: string,
  decision: 'approve' | 'reject' = 'approve',
): Promise<Approver> {
  const socket = createClient({
    url: `${gateway.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${adminKey}` },
    retryAttempts: 0,
  });
  const events = gateway.runtime.events;
  const before = events.subscriberCount;
  const decided = new Promise<string>((resolve, reject) => {
    const stop = socket.subscribe<{ approvalQueue: { approval: { id: string } } }>(
      { query: APPROVAL_QUEUE, variables: { agentId } },
      {
        next: (message) => {
          const id = message.data?.approvalQueue.approval.id;
          if (id === undefined) return;
          stop();
          const mutation = decision === 'approve' ? 'approveApproval' : 'rejectApproval';
          graphql<Record<string, { status: string }>>(
            gateway.url,
            adminKey,
            `mutation($id: ID!) { ${mutation}(id: $id, reason: "test approver") { status } }`,
            { id },
          ).then((answer) => {
            // USED: the agent resubmitted before the mutation read the approval back.
            const status = answer.data?.[mutation]?.status;
            const expected = decision === 'approve' ? ['APPROVED', 'USED'] : ['REJECTED'];
            if (status !== undefined && expected.includes(status)) resolve(id);
            else reject(new Error(`${mutation} answered ${JSON.stringify(answer)}`));
          }, reject);
        },
        error: reject,
        complete: () => {},
      },
    );
  });
  while (events.subscriberCount <= before) await new Promise((next) => setImmediate(next));
  return { decided, dispose: () => socket.dispose() as Promise<void> };
}
