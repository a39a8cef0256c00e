// What a configuration mutation does after its service has written the change, bumped the
// configVersion and audited it (control-plane/services/): publish a snapshot, so the data plane
// enforces the change on its very next request. The resolver publishes, not the service, except
// where the service announces the change on the event bus and the announcement must follow the
// publish (spawnAgent, approveToolDefinition): there the service publishes itself.
import type { GraphQLContext } from './context.js';

/** Resolves once the data plane serves every change committed so far. */
export async function publishChange(context: GraphQLContext): Promise<void> {
  await context.publisher.publishNow();
}
