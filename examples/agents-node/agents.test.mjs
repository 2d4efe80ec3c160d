// The framework agents, graded: each naive agent must be unsafe on exactly
// the rows naive-refund is unsafe on, and each careful agent must pass
// every row. Run by .ci/run under the Node 22 this package pins (the npm
// `node` package), with REPLAYLAB_BIN (a built replaylab) and
// REPLAYLAB_NAIVE_REFUND (a built examples/naive-refund).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = process.env.REPLAYLAB_BIN;
const naiveRefund = process.env.REPLAYLAB_NAIVE_REFUND;

// grade runs conform on a command and returns its JSON report.
function grade(mcp, ...command) {
  const args = ['conform', '--json', ...(mcp ? ['--mcp'] : []), '--', ...command];
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 300_000, maxBuffer: 64 << 20 });
  assert.ok(r.stdout, `conform ${command.join(' ')}: no report (exit ${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const unsafe = (report) => report.rows.filter((r) => r.grade === 'unsafe').map((r) => r.scenario).sort();

test('the environment names replaylab and naive-refund', () => {
  assert.ok(bin, 'REPLAYLAB_BIN is not set');
  assert.ok(naiveRefund, 'REPLAYLAB_NAIVE_REFUND is not set');
  assert.ok(Number(process.versions.node.split('.')[0]) >= 22, `Node ${process.versions.node}: these packages need 22`);
});

const reference = bin && naiveRefund ? unsafe(grade(false, naiveRefund)) : [];

for (const framework of ['langchain', 'vercel', 'openai']) {
  test(`${framework}: the naive agent is unsafe where naive-refund is`, () => {
    assert.ok(reference.length > 0, 'naive-refund is unsafe on no row');
    const report = grade(true, process.execPath, path.join(here, framework, 'naive.mjs'));
    assert.deepEqual(unsafe(report), reference);
    for (const r of report.rows) {
      if (!reference.includes(r.scenario)) assert.equal(r.grade, 'pass', `${r.scenario}: ${r.why}`);
    }
  });
  test(`${framework}: the careful agent passes every row`, () => {
    const report = grade(true, process.execPath, path.join(here, framework, 'careful.mjs'));
    for (const r of report.rows) assert.equal(r.grade, 'pass', `${r.scenario}: ${r.why}`);
    assert.equal(report.rows.length, 15);
  });
}
