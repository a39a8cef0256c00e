// What `agent-gateway data-plane` runs (data-plane.ts registers it): a data plane fed by a remote
// control plane until SIGINT/SIGTERM, after checking its flags and credential file. Part of the
// server bundle (server-commands.ts).
import { readFile } from 'node:fs/promises';
import { type GatewayConfig, loadConfig } from '../../runtime/config.js';
import { startDataPlane } from '../../runtime/start-data-plane.js';
import { formatErrorLine, gatewayError } from '../../shared/errors/index.js';
import { createLogger } from '../logger.js';
import { runUntilSignal } from '../run-until-signal.js';
import { requirePostgres, requirePublicUrl } from './split-deployment.js';

/** The flags of `agent-gateway data-plane` (strings only: they cross into the server bundle). */
export interface DataPlaneOptions {
  controlPlane?: string;
  credentialFile?: string;
  name?: string;
}

export async function runDataPlane(options: DataPlaneOptions): Promise<number> {
  let config: GatewayConfig;
  let controlPlaneUrl: string;
  let credential: string;
  try {
    config = loadConfig();
    requirePostgres(config, 'data-plane');
    requirePublicUrl(config, 'data-plane');
    controlPlaneUrl = parseControlPlaneUrl(options.controlPlane);
    credential = await readCredential(options.credentialFile);
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
  const logger = createLogger(config.logLevel);
  return runUntilSignal(logger, config.shutdownTimeoutMs, () =>
    startDataPlane(config, { logger, controlPlaneUrl, credential, name: options.name }),
  );
}

function parseControlPlaneUrl(text: string | undefined): string {
  if (!text) {
    throw gatewayError('CONFIG_INVALID', {
      setting: '--control-plane',
      problem: 'a URL is required',
    });
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw gatewayError('CONFIG_INVALID', {
      setting: `--control-plane ${text}`,
      problem: 'not a URL',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw gatewayError('CONFIG_INVALID', {
      setting: `--control-plane ${text}`,
      problem: 'expected an http(s):// URL',
    });
  }
  return url.origin;
}

async function readCredential(file: string | undefined): Promise<string> {
  if (!file) {
    throw gatewayError('CONFIG_INVALID', {
      setting: '--credential-file',
      problem: 'a file is required',
    });
  }
  let text: string;
  try {
    text = (await readFile(file, 'utf8')).trim();
  } catch (error) {
    throw gatewayError('CONFIG_INVALID', {
      setting: `--credential-file ${file}`,
      problem: `cannot be read: ${(error as Error).message}`,
    });
  }
  if (!/^agdp_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/.test(text)) {
    throw gatewayError('CONFIG_INVALID', {
      setting: `--credential-file ${file}`,
      problem: 'it does not hold an agdp_… data-plane credential',
    });
  }
  return text;
}
