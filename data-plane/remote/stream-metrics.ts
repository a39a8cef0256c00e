// What a remote data plane's /metrics says about its configuration stream (docs/config-push.md,
// "Staleness"): whether the stream is open, how long the control plane has been silent (the age of
// the confirmation that the snapshot served is the current one), whether that is past the stale
// threshold, and whether the control plane refuses the credential. Read at scrape time from the
// client: nothing is updated on the request path.
import { Gauge, type Registry } from 'prom-client';
import type { ConfigStreamClient } from './client.js';

export function registerStreamMetrics(
  registry: Registry,
  client: Pick<ConfigStreamClient, 'connected' | 'silentMs' | 'staleAfterMs' | 'refused'>,
): void {
  const flag = (name: string, help: string, read: () => boolean) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read() ? 1 : 0);
      },
    });
  flag(
    'agent_gateway_config_stream_connected',
    'Whether this data plane holds an open configuration stream to the control plane (1) or not (0).',
    () => client.connected,
  );
  flag(
    'agent_gateway_snapshot_stale',
    'Whether the control plane has been silent for longer than three heartbeats (1: stale, /readyz answers 503).',
    () => client.silentMs > client.staleAfterMs,
  );
  flag(
    'agent_gateway_data_plane_revoked',
    'Whether the control plane refuses this data plane’s credential (1: revoked, governed requests are refused).',
    () => client.refused,
  );
  new Gauge({
    name: 'agent_gateway_snapshot_age_seconds',
    help: 'Seconds since the control plane last confirmed the configuration this data plane serves (its last byte on the stream); stale above three heartbeats.',
    registers: [registry],
    collect() {
      this.set(Math.round(client.silentMs) / 1000);
    },
  });
}
