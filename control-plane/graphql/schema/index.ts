// Imports every domain (each registers its types and fields on the builder) and builds the
// schema. The printed form is committed as schema/schema.graphql (print-schema.ts).
import { builder } from '../builder.js';
import './errors.js';
import './tenants.js';
import './api-keys.js';
import './gateway-policy.js';
import './mcp-servers.js';
import './tool-definitions.js';
import './npl-policies.js';
import './agents.js';
import './agent-spawn.js';
import './agentiam.js';
import './oauth-clients.js';
import './issued-tokens.js';
import './approvals.js';
import './audit-trail.js';
import './audit-checkpoints.js';
import './decision-stats.js';
import './data-planes.js';
import './agent-kill.js';

export const schema = builder.toSchema({ sortSchema: true });
