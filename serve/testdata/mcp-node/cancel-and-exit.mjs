// A TypeScript SDK client that gives up on a create_refund call and exits
// at once: its notifications/cancelled may or may not leave before the
// process does. Run by mcp.test.mjs with the /mcp URL as its argument.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const client = new Client({ name: 'cancel-and-exit', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
try {
  await client.callTool({ name: 'create_refund', arguments: { intent: 'refund-1042', charge: 'ch_1042', amount: 4500 } }, undefined, { timeout: 300 });
} catch {
  process.exit(0);
}
process.exit(1);
