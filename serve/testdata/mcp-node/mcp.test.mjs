// The official MCP TypeScript SDK's client (@modelcontextprotocol/sdk
// 1.32.2), unchanged, against replaylab serve --mcp: an MCP client nobody
// here wrote lists the tools, loses a reply after a commit, cancels,
// retries with the same key and sees one refund, or without one and sees
// two, and serve's verdicts say so. Each test starts its own serve and
// stops it.
//
// Run: npm ci && node --test   (in this directory)

import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startServe, binary, creates, verdictOf } from '../stripe-node/serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

const refund1042 = (key) => ({
  intent: 'refund-1042', charge: 'ch_1042', amount: 4500, currency: 'usd',
  ...(key ? { idempotency_key: key } : {}),
});

// agent connects the SDK's client to serve's /mcp.
async function agent(srv) {
  const client = new Client({ name: 'ts-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`)));
  return client;
}

// withServe runs body against a fresh serve --mcp and resolves with what
// serve printed when it stopped.
async function withServe(args, body) {
  const srv = await startServe(['--mcp', ...args]);
  let client;
  try {
    client = await agent(srv);
    await body(srv, client);
  } finally {
    if (client) await client.close();
  }
  return srv.stop();
}

// until polls cond (async) for up to 5 s.
async function until(what, cond) {
  for (let end = Date.now() + 5000; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    if (await cond()) return;
  }
  throw new Error(`gave up waiting: ${what}`);
}

test('the tools are listed with schemas and honest annotations', async () => {
  await withServe([], async (srv, client) => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(byName).sort(), ['create_refund', 'get_refund', 'list_refunds']);
    const create = byName.create_refund;
    assert.equal(create.annotations.destructiveHint, true);
    assert.equal(create.annotations.idempotentHint, false);
    assert.equal(byName.get_refund.annotations.readOnlyHint, true);
    assert.deepEqual(create.inputSchema.required, ['intent']);
    assert.ok(create.inputSchema.properties.idempotency_key.description.includes('same key on every retry'));
    assert.ok(create.outputSchema, 'create_refund has an output schema');
  });
});

for (const { name, retryKey, effects, verdict } of [
  { name: 'same key', retryKey: 'k1', effects: 1, verdict: 'exactly_once' },
  { name: 'no key', retryKey: undefined, effects: 2, verdict: 'duplicate' },
]) {
  test(`a reply lost after the commit, cancelled, then a retry with ${name}: ${effects} refund(s)`, async () => {
    const out = await withServe(['--faults', 'timeout_after_commit'], async (srv, client) => {
      // The SDK gives up on the call and sends notifications/cancelled.
      await assert.rejects(client.callTool({ name: 'create_refund', arguments: refund1042(retryKey) }, undefined, { timeout: 400 }),
        (err) => err.code === -32001 && /timed out/.test(err.message));
      await until('the cancellation to be recorded', async () => (await srv.session()).requests[0].call?.cancelled);
      let s = await srv.session();
      assert.equal(s.ledger.effects, 1, 'the commit stands after the cancel');
      assert.equal(s.requests[0].wire, 'held');
      assert.match(s.requests[0].call.cancelled.reason, /timed out/);

      const res = await client.callTool({ name: 'create_refund', arguments: refund1042(retryKey) });
      assert.equal(res.isError, undefined);
      assert.equal(res.structuredContent.status, 'succeeded');
      s = await srv.session();
      assert.equal(s.ledger.effects, effects);
      assert.notEqual(creates(s)[1].call.id, creates(s)[0].call.id, 'the retry is a new request');
      if (retryKey) {
        assert.equal(res.structuredContent.id, s.ledger.objects[0].id, 'the same key replays the refund that stands');
        assert.equal(res._meta['replaylab/idempotent_replayed'], true);
      }
      assert.equal(verdictOf(s, 'refund-1042'), verdict);
    });
    assert.match(out.stdout, new RegExp(`refund-1042\\s.*${verdict}`));
  });
}

test('a client that cancels and exits at once: its held call ends, named for what reached serve', async () => {
  await withServe(['--faults', 'timeout_after_commit'], async (srv) => {
    const r = spawnSync(process.execPath, [path.join(here, 'cancel-and-exit.mjs'), `${srv.url}/mcp`], { timeout: 20000 });
    assert.equal(r.status, 0, `the client did not give up and exit: ${r.stderr}`);
    await until('the held call to end', async () => (await srv.session()).requests[0]?.held_end);
    const req = (await srv.session()).requests[0];
    assert.equal(req.wire, 'held');
    // The cancellation is named when it came; when the exit cut it off, the
    // hold says the client closed without a word, never that it still waits.
    assert.equal(req.held_end.how, req.call.cancelled ? 'cancelled' : 'client_closed');
    assert.ok(req.held_end.tick >= req.tick);
  });
});

test('the stream closed after the commit: the call fails at once; a new request with the same key gets the refund', async () => {
  await withServe(['--faults', 'crash_after_send'], async (srv, client) => {
    await assert.rejects(client.callTool({ name: 'create_refund', arguments: refund1042('k1') }, undefined, { timeout: 5000 }),
      (err) => !(err.code === -32001), 'not a timeout: the stream closed');
    let s = await srv.session();
    assert.equal(s.ledger.effects, 1);
    assert.equal(s.requests[0].wire, 'closed');
    const res = await client.callTool({ name: 'create_refund', arguments: refund1042('k1') });
    s = await srv.session();
    assert.equal(res.structuredContent.id, s.ledger.objects[0].id);
    assert.equal(s.ledger.effects, 1);
    assert.equal(verdictOf(s, 'refund-1042'), 'exactly_once');
  });
});

test('--tool-errors opaque: the model reads only "Failed to create refund"', async () => {
  await withServe(['--tool-errors', 'opaque', '--faults', 'failure_before_commit,server_error_after_commit'], async (srv, client) => {
    for (let i = 0; i < 2; i++) {
      const res = await client.callTool({ name: 'create_refund', arguments: refund1042() });
      assert.equal(res.isError, true);
      assert.deepEqual(res.content, [{ type: 'text', text: 'Failed to create refund' }]);
      assert.equal(res.structuredContent, undefined, 'an error shows no refund');
    }
    // A refusal and a committed refund behind the same words.
    assert.equal((await srv.session()).ledger.effects, 1);
  });
});

test('a refund made through a tool is listed over REST, and the other way round', async () => {
  await withServe([], async (srv, client) => {
    const made = (await client.callTool({ name: 'create_refund', arguments: refund1042('k1') })).structuredContent;
    const rest = await fetch(`${srv.url}/v1/refunds?charge=ch_1042`, { headers: { Authorization: 'Bearer sk_test_x' } }).then((r) => r.json());
    assert.deepEqual(rest.data.map((r) => r.id), [made.id]);
    const listed = await client.callTool({ name: 'list_refunds', arguments: { intent: 'refund-1042' } });
    assert.deepEqual(listed.structuredContent.refunds.map((r) => r.id), [made.id]);
  });
});

test('bad arguments are error results that say what is wrong', async () => {
  await withServe([], async (srv, client) => {
    const res = await client.callTool({ name: 'create_refund', arguments: { intent: 'refund-1042', charge: 'ch_1', idempotency_key: 'k'.repeat(10240) } });
    assert.equal(res.isError, true);
    assert.match(res.content[0].text, /255 characters/);
    await assert.rejects(client.callTool({ name: 'refund_everything', arguments: {} }), /refund_everything/);
    assert.equal((await srv.session()).ledger.effects, 0);
  });
});

test('over stdio, as a host launches it: the lost reply, the same-key retry, the verdict on standard error', async () => {
  const transport = new StdioClientTransport({ command: binary(), args: ['serve', '--mcp', '--stdio', '--faults', 'timeout_after_commit'], stderr: 'pipe' });
  let stderr = '';
  transport.stderr.on('data', (b) => { stderr += b; });
  const client = new Client({ name: 'ts-host', version: '1.0.0' });
  client.onerror = () => {}; // a reply the server sends after the cancel is dropped
  await client.connect(transport);
  await assert.rejects(client.callTool({ name: 'create_refund', arguments: refund1042('k1') }, undefined, { timeout: 400 }), /timed out/);
  const res = await client.callTool({ name: 'create_refund', arguments: refund1042('k1') });
  assert.equal(res.structuredContent.status, 'succeeded');
  await client.close();
  await until('serve to print its verdicts', () => /exactly_once/.test(stderr));
  assert.match(stderr, /MCP over standard input and output/);
  assert.match(stderr, /refund-1042\s.*exactly_once/);
});
