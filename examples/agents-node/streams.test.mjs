// What each framework's MCP client does when a call's response stream
// breaks after the commit (serve's crash_after_send): which MCP revision it
// speaks, what error the call ends in, and whether the client sends the
// call again on its own. docs/agents.md reports what this finds; a change
// in a client's behaviour fails here first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Client as SDKClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SDKTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as NextClient, StreamableHTTPClientTransport as NextTransport } from '@modelcontextprotocol/client';
import { createMCPClient } from '@ai-sdk/mcp';

const bin = process.env.REPLAYLAB_BIN;
const args = { intent: 'refund-1042', charge: 'ch_1042', amount: 4500, currency: 'usd' };

// serve starts replaylab serve --mcp on a free loopback port, its first
// create meeting crash_after_send, and returns its base URL and a stop.
async function serve() {
  const p = spawn(bin, ['serve', '--mcp', '--addr', '127.0.0.1:0', '--faults', 'crash_after_send', '--tick', '100ms'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 10_000);
    const read = (b) => {
      out += b;
      const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    };
    p.stdout.on('data', read);
    p.stderr.on('data', read);
    p.on('exit', () => reject(new Error(`serve exited: ${out}`)));
  });
  return { base, stop: async () => { p.kill('SIGTERM'); await once(p, 'exit'); } };
}

// The clients, each making one create_refund call: what it ends in.
const clients = {
  '@modelcontextprotocol/sdk 1.32.2 (LangChain.js)': async (url) => {
    const c = new SDKClient({ name: 'measure', version: '1' });
    await c.connect(new SDKTransport(new URL(url)));
    try { return await c.callTool({ name: 'create_refund', arguments: args }, undefined, { timeout: 5000 }); } finally { await c.close(); }
  },
  '@modelcontextprotocol/client 2.4.0 (OpenAI Agents SDK)': async (url) => {
    // As the Agents SDK makes it (agents-core's MCP shim): version
    // negotiation on auto.
    const c = new NextClient({ name: 'measure', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await c.connect(new NextTransport(new URL(url)));
    try { return await c.callTool({ name: 'create_refund', arguments: args }, { timeout: 5000 }); } finally { await c.close(); }
  },
  '@ai-sdk/mcp 2.0.99 (Vercel AI SDK)': async (url) => {
    const c = await createMCPClient({ transport: { type: 'http', url } });
    try {
      const { create_refund } = await c.tools();
      return await create_refund.execute(args, { toolCallId: 'measure', messages: [], abortSignal: AbortSignal.timeout(5000) });
    } finally { await c.close(); }
  },
};

// The revision each speaks against a provider that serves both.
const speaks = {
  '@modelcontextprotocol/sdk 1.32.2 (LangChain.js)': 'session (Mcp-Session-Id)',
  '@modelcontextprotocol/client 2.4.0 (OpenAI Agents SDK)': '2026-07-28',
  '@ai-sdk/mcp 2.0.99 (Vercel AI SDK)': '2026-07-28',
};

for (const [name, callOnce] of Object.entries(clients)) {
  test(`a stream broken after the commit: ${name} fails the call and sends nothing again`, async () => {
    assert.ok(bin, 'REPLAYLAB_BIN is not set');
    const srv = await serve();
    try {
      let failure = null;
      try { await callOnce(srv.base + '/mcp'); } catch (err) { failure = err; }
      assert.ok(failure, 'the call whose stream broke came back with a result');
      // Room for a client that would send it again on its own.
      await new Promise((r) => setTimeout(r, 1500));
      const session = await (await fetch(srv.base + '/_replaylab/session')).json();
      const creates = session.requests.filter((r) => r.kind === 'create');
      const revision = creates[0]?.call?.revision || `session (${creates[0]?.call?.session ? 'Mcp-Session-Id' : 'none'})`;
      process.stderr.write(`[${name}] revision ${revision}; the call failed with ${failure.name}: ${failure.message}${failure.cause ? ` (cause: ${failure.cause.message ?? failure.cause})` : ''}; creates: ${creates.length}\n`);
      assert.equal(creates.length, 1, `the client sent the create ${creates.length} times`);
      assert.equal(revision, speaks[name]);
      assert.equal(creates[0].wire, 'closed');
    } finally {
      await srv.stop();
    }
  });
}
