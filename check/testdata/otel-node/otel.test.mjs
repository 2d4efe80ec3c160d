// A traced agent against replaylab serve --mcp with a lost reply; then
// replaylab check reads the trace file exactly as the exporter wrote it,
// beside the session serve recorded: the naive agent's resend and its
// duplicate are reported, with the spans that show them; the careful
// agent's run reports none.
//
// Run: npm ci && node --test   (in this directory)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe, binary } from '../../../serve/testdata/stripe-node/serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

async function run(agent) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replaylab-otel-'));
  const tracesFile = path.join(dir, 'traces.otlp.jsonl');
  const sessionFile = path.join(dir, 'session.json');
  const srv = await startServe(['--mcp', '--faults', 'timeout_after_commit,success', '--record', sessionFile]);
  let out;
  try {
    out = execFileSync(process.execPath, [path.join(here, 'agent.mjs')], {
      env: { ...process.env, AGENT: agent, TRACES_FILE: tracesFile, REPLAYLAB_MCP_URL: `${srv.url}/mcp`, REPLAYLAB_REQUEST_TIMEOUT_MS: '400' },
      encoding: 'utf8', timeout: 30000,
    });
  } finally {
    await srv.stop();
  }
  const check = spawnSync(binary(), ['check', tracesFile, sessionFile, '--json'], { encoding: 'utf8' });
  return { dir, out, check, tracesFile, sessionFile };
}

test('the naive agent: its resend under a new key and the duplicate, from spans nobody here wrote', async () => {
  const { dir, out, check, tracesFile } = await run('naive');
  try {
    assert.match(out, /"belief":"done"/);
    // The file is the exporter's: OTLP/JSON with the instrumentation's own spans.
    const first = JSON.parse(fs.readFileSync(tracesFile, 'utf8').split('\n')[0]);
    assert.ok(first.resourceSpans, 'OTLP/JSON TracesData');
    assert.equal(check.status, 1, check.stderr + check.stdout);
    const rep = JSON.parse(check.stdout);
    assert.equal(rep.write_calls, 2);
    const kinds = rep.anomalies.map((a) => a.kind).sort();
    // The key change is the resend's own: said once, as the resend.
    assert.deepEqual(kinds, ['duplicate_effect', 'resent_after_unknown']);
    const resent = rep.anomalies.find((a) => a.kind === 'resent_after_unknown');
    assert.equal(resent.intent, 'refund-1042');
    // Traceloop's spans carry no tool call id: the hop is told by the arguments.
    assert.equal(resent.hop, 'same_arguments');
    assert.equal(resent.evidence.length, 2);
    assert.equal(resent.evidence[0].outcome, 'info');
    assert.match(resent.evidence[0].note, /timed out/);
    assert.equal(resent.evidence[1].outcome, 'ok');
    const dup = rep.anomalies.find((a) => a.kind === 'duplicate_effect');
    assert.deepEqual(dup.objects, ['re_0001', 're_0002']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the careful agent: one key, a list before the resend, no anomaly', async () => {
  const { dir, out, check } = await run('careful');
  try {
    assert.match(out, /"belief":"done","refund":"re_0001"/);
    assert.equal(check.status, 0, check.stderr + check.stdout);
    const rep = JSON.parse(check.stdout);
    assert.equal(rep.anomalies.length, 0);
    assert.ok(rep.reads >= 1, 'the list_refunds span is read');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
