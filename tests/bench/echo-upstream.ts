// A minimal MCP-ish JSON-RPC echo upstream (plain node:http, JSON answers, no sessions) for the
// forwarding benchmarks: the official SDK's own cost would hide ours. The source runs as a child
// process (`node --input-type=module -e`), which prints {"url": …} once it listens.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export const RAW_ECHO_SERVER = `
import { createServer } from 'node:http';
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const m = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    let body;
    if (m.method === 'initialize') {
      body = { jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'echo', version: '1' } } };
    } else if (m.id === undefined) {
      res.writeHead(202).end();
      return;
    } else {
      body = { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: JSON.stringify(m.params.arguments) }] } };
    }
    const text = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: 'http://127.0.0.1:' + server.address().port + '/mcp' }));
});
`;

/** Starts RAW_ECHO_SERVER in a child process and resolves once it listens. */
export async function startEchoUpstream(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', RAW_ECHO_SERVER], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for await (const line of createInterface({ input: child.stdout as NodeJS.ReadableStream })) {
    return { url: (JSON.parse(line) as { url: string }).url, child };
  }
  throw new Error('upstream process exited before reporting its URL');
}
