// What the split commands (`control-plane`, `data-plane` and its `register`/`revoke`) require of
// the configuration before anything starts.
import type { GatewayConfig } from '../../runtime/config.js';
import { gatewayError } from '../../shared/errors/index.js';

/**
 * A split deployment has one public URL in front of every process: the issuer of every token, the
 * audience a data plane accepts, the htu of agent proofs, the base of status-list URLs. Derived
 * from each process's own address it would differ per process (tokens minted by one data plane
 * refused by the others), so both split commands refuse to start without it.
 */
export function requirePublicUrl(
  config: GatewayConfig,
  command: 'control-plane' | 'data-plane',
): void {
  if (!config.publicUrl) {
    throw gatewayError('PUBLIC_URL_REQUIRED', { command });
  }
}

/** Remote data planes write audit entries and approvals to the control plane's database. */
export function requirePostgres(
  config: GatewayConfig,
  command: 'control-plane' | 'data-plane',
): void {
  if (!config.databaseUrl) {
    throw gatewayError(
      command === 'control-plane'
        ? 'CONTROL_PLANE_REQUIRES_POSTGRES'
        : 'DATA_PLANE_REQUIRES_POSTGRES',
    );
  }
}
