// The quickstart's MCP server: three tools over MCP Streamable HTTP (official SDK, stateless),
// standing in for the real servers your agents call.
//
//   node client/examples/quickstart/server.mjs      # http://127.0.0.1:3001/mcp
//
// search_docs is harmless, export_customers is what the quickstart policy denies, send_payment above
// 100 is what it holds for a human. Environment: QUICKSTART_PORT (default 3001; 0 picks a free
// port, printed; setup.mjs registers the port its own QUICKSTART_PORT names).
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const port = process.env.QUICKSTART_PORT ?? '3001';
if (!/^[0-9]{1,5}$/.test(port) || Number(port) > 65535) {
  console.error(`QUICKSTART_PORT is not a port: ${port}`);
  process.exit(1);
}

function buildServer() {
  const server = new McpServer({ name: 'quickstart-tools', version: '1.0.0' });
  const text = (value) => ({ content: [{ type: 'text', text: value }] });
  server.registerTool(
    'search_docs',
    { description: 'Search the team handbook.', inputSchema: { query: z.string() } },
    async ({ query }) => text(`3 pages mention "${query}"`),
  );
  server.registerTool(
    'export_customers',
    { description: 'Export the customer list of a segment.', inputSchema: { segment: z.string() } },
    async ({ segment }) => text(`exported the customers of segment ${segment}`),
  );
  server.registerTool(
    'send_payment',
    { description: 'Pay an invoice.', inputSchema: { to: z.string(), amount: z.number() } },
    async ({ to, amount }) => text(`paid ${amount} to ${to}`),
  );
  return server;
}

const http = createServer(async (request, response) => {
  if (request.url !== '/mcp') {
    response.writeHead(404).end();
    return;
  }
  // Stateless: a server and transport per request, as the SDK's stateless example does.
  const server = buildServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  response.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response);
});

http.on('error', (error) => {
  console.error(
    error.code === 'EADDRINUSE'
      ? `port ${port} is taken (QUICKSTART_PORT): choose another and give setup.mjs the same`
      : `cannot listen on 127.0.0.1:${port} (QUICKSTART_PORT): ${error.message}`,
  );
  process.exit(1);
});
http.listen(Number(port), '127.0.0.1', () => {
  console.log(`quickstart MCP server: http://127.0.0.1:${http.address().port}/mcp`);
});
