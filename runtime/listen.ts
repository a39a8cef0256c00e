// Takes the configured port, with an operator's answer when it cannot: a port in use and any
// other listen failure are registry errors naming host:port. Returns the URL the server answers on.
import type { FastifyInstance } from 'fastify';
import { gatewayError } from '../shared/errors/index.js';
import type { GatewayConfig } from './config.js';

export async function listen(app: FastifyInstance, config: GatewayConfig): Promise<string> {
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${config.host}:${config.port}`;
    if (code === 'EADDRINUSE') {
      throw gatewayError('SERVER_PORT_IN_USE', { address: where }, { cause: error });
    }
    throw gatewayError(
      'SERVER_LISTEN_FAILED',
      { address: where, reason: (error as Error).message },
      { cause: error },
    );
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${port}`;
}
