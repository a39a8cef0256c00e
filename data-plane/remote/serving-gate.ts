// The serving gate of a remote data plane (docs/config-push.md, "Start-up" and "Revocation"): a
// data plane that must not decide refuses every governed request before anything reads it.
//   - Starting: until the control plane's current configuration is applied (or, the control plane
//     being unreachable for the start-up bound, the persisted snapshot is accepted), every request
//     answers 503 DATA_PLANE_NOT_READY: an older persisted policy may be looser than the current.
//   - Revoked: once the control plane refuses its credential, 503 DATA_PLANE_REVOKED: the data
//     plane is no longer part of the fleet, so it decides nothing (kills included).
// Health, readiness and metrics stay answered. The gate runs before the kill guard, so a refused
// request costs no read of the kill table; while the data plane serves it costs one comparison.
// A refusal of a caller presenting an API key the snapshot knows is audited through the refusal
// auditor (bounded per key, reason code and minute); other callers cannot be tied to a tenant
// before authentication, which a data plane that decides nothing does not perform.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RefusalAuditor } from '../../http-edge/refusal-auditor.js';
import { gatewayError } from '../../shared/errors/index.js';
import { findPresentedKey } from '../plugins/auth.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import { UNGUARDED_PATHS } from './kill-guard.js';

export interface ServingGateOptions {
  /** True while the control plane refuses this data plane's credential. */
  readonly revoked: () => boolean;
  readonly store: Pick<SnapshotStore, 'current'>;
  readonly refusals: Pick<RefusalAuditor, 'refuse'>;
}

export class ServingGate {
  readonly #options: ServingGateOptions;
  /** Set once the start-up wait is over and a snapshot serves. */
  #started = false;

  constructor(options: ServingGateOptions) {
    this.#options = options;
  }

  get started(): boolean {
    return this.#started;
  }

  /** The start-up wait is over: requests are decided from here on (unless revoked). */
  open(): void {
    this.#started = true;
  }

  /** Undefined when a request may be decided; otherwise the registry code it is refused with. */
  refusal(): 'DATA_PLANE_NOT_READY' | 'DATA_PLANE_REVOKED' | undefined {
    if (this.#options.revoked()) return 'DATA_PLANE_REVOKED';
    return this.#started ? undefined : 'DATA_PLANE_NOT_READY';
  }

  /** Installs the gate in front of every route but health, readiness and metrics. */
  install(app: FastifyInstance): void {
    app.addHook(
      'onRequest',
      (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
        const code = this.refusal();
        if (code === undefined || UNGUARDED_PATHS.has(request.url.split('?')[0] ?? '')) {
          done();
          return;
        }
        const error = gatewayError(code);
        this.#audit(request, code, error.message).then(
          () => done(error),
          () => done(error),
        );
      },
    );
  }

  /** Audits the refusal when the caller's API key names its tenant; never throws. */
  async #audit(request: FastifyRequest, code: string, detail: string): Promise<void> {
    let key: ReturnType<typeof findPresentedKey>;
    try {
      key = findPresentedKey(request.headers.authorization, this.#options.store.current);
    } catch {
      return;
    }
    await this.#options.refusals.refuse({
      tenantId: key.tenant.id,
      subjectType: 'api_key',
      subject: key.id,
      code,
      route: `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`,
      detail,
    });
  }
}
