// Adyen's, PayPal's, Square's and Checkout.com's official Node SDKs,
// unchanged, against replaylab serve on each provider's wire: a refund
// made and read back, a lost reply and what the SDK does by itself, a
// saved 500, a late commit, a pending refund that ends failed, a key
// reused with another amount, and a refund past what was captured. Each
// test starts its own serve and stops it.
//
// What each SDK did by itself is asserted here, and docs/providers.md
// tells it as a table ("What each SDK does by itself").
//
// Run: npm ci && node --test   (in this directory)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServe, creates, verdictOf } from '../stripe-node/serve.mjs';
import { sdks, charges } from './sdks.mjs';

async function withServe(sdk, args, body) {
  const srv = await startServe([...sdk.serveArgs, ...args]);
  try {
    return await body(srv);
  } finally {
    await srv.stop();
  }
}

// fails resolves with what a refund that must fail rejected with.
async function fails(p) {
  try {
    const r = await p;
    assert.fail(`the refund succeeded: ${JSON.stringify(r.status)}`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    return e;
  }
}

// What each SDK does by itself when a reply is lost and when a saved 500
// comes back: the creates serve saw from one call of the SDK.
const byItself = {
  adyen: { lost: 1, saved500: 1 },
  paypal: { lost: 1, saved500: 1 },
  // Square's SDK retries a 5xx twice, under the same body and so the same
  // idempotency_key; Square keeps no 500 under a key, so the retry runs
  // again and the call returns a success over a refund made twice.
  square: { lost: 1, saved500: 2 },
  checkout: { lost: 1, saved500: 1 },
};

// What each profile answers a same-key resend of a saved 500 with, and a
// key reused with another amount with.
const rules = {
  adyen: { afterSaved500: 500, mismatch: { status: 422, code: 'idempotency_key_reused' }, inFlight: { status: 422, code: '704' }, overLimit: { status: 422, code: 'refund_exceeds_captured' } },
  paypal: { afterSaved500: 200, mismatch: { status: 422, code: 'PAYPAL_REQUEST_ID_PREVIOUSLY_USED' }, inFlight: { status: 409, code: 'RESOURCE_CONFLICT' }, overLimit: { status: 422, code: 'REFUND_AMOUNT_EXCEEDED' } },
  square: { afterSaved500: 200, mismatch: { status: 400, code: 'IDEMPOTENCY_KEY_REUSED' }, inFlight: { status: 409, code: 'IDEMPOTENCY_KEY_IN_USE' }, overLimit: { status: 400, code: 'REFUND_AMOUNT_INVALID' } },
  // Checkout.com does not compare a reused key's payload: it replays.
  checkout: { afterSaved500: 202, mismatch: null, inFlight: { status: 409, code: 'request_in_progress' }, overLimit: { status: 422, code: 'refund_amount_exceeds_balance' } },
};

const pendingWords = { paypal: ['PENDING', 'FAILED'], square: ['PENDING', 'FAILED'], checkout: ['Pending', 'Declined - Do Not Honour'] };

for (const sdk of sdks) {
  test(`${sdk.name}: a refund is made and read back`, () =>
    withServe(sdk, [], async (srv) => {
      const r = await sdk.refund(srv, { key: 'k-made' });
      assert.ok(r.id, 'the refund has an id');
      if (sdk.read) {
        const st = await sdk.read(srv, r.id);
        assert.ok(['COMPLETED', 'Approved'].includes(st), `the read says ${st}`);
      }
      const s = await srv.session();
      assert.equal(s.ledger.effects, 1);
      assert.equal(verdictOf(s, 'refund-1042'), 'exactly_once');
      assert.equal(creates(s)[0].key, 'k-made');
    }));

  test(`${sdk.name}: a lost reply: the SDK sends ${byItself[sdk.name].lost} create(s) by itself; the caller's resend under its key replays`, () =>
    withServe(sdk, ['--faults', 'timeout_after_commit', '--hold', '5s'], async (srv) => {
      const e = await fails(sdk.refund(srv, { key: 'k-lost', timeout: 700 }));
      assert.ok(e.timeout, `the lost reply surfaced as ${JSON.stringify(e.status)} ${e.code}`);
      let s = await srv.session();
      assert.equal(creates(s).length, byItself[sdk.name].lost);
      const r = await sdk.refund(srv, { key: 'k-lost' });
      assert.ok(r.id);
      s = await srv.session();
      assert.equal(s.ledger.effects, 1, 'the resend under the same key replayed');
      assert.equal(verdictOf(s, 'refund-1042'), 'exactly_once');
    }));

  test(`${sdk.name}: a saved 500: the SDK sends ${byItself[sdk.name].saved500} create(s) by itself; a same-key resend meets the profile`, () =>
    withServe(sdk, ['--faults', 'server_error_after_commit'], async (srv) => {
      let first;
      try {
        first = await sdk.refund(srv, { key: 'k-500' });
      } catch (e) {
        first = e;
      }
      let s = await srv.session();
      const cs = creates(s);
      assert.equal(cs.length, byItself[sdk.name].saved500);
      assert.ok(cs.every((c) => c.key === 'k-500'), `keys ${cs.map((c) => c.key)}`);
      if (byItself[sdk.name].saved500 > 1) {
        // The SDK's own retry made a second refund and reported success.
        assert.ok(first.id, 'the SDK returned the retry\'s success');
        assert.equal(s.ledger.effects, 2);
        assert.equal(verdictOf(s, 'refund-1042'), 'duplicate');
        return;
      }
      assert.equal(first.status, 500);
      let again;
      try {
        again = await sdk.refund(srv, { key: 'k-500' });
      } catch (e) {
        again = e;
      }
      assert.equal(again.status, rules[sdk.name].afterSaved500);
      s = await srv.session();
      assert.equal(s.ledger.effects, rules[sdk.name].afterSaved500 === 500 || sdk.name === 'paypal' ? 1 : 2);
    }));

  test(`${sdk.name}: a late commit: the key is in flight, and a resend under it is refused in the profile's words`, () =>
    withServe(sdk, ['--faults', 'late_commit', '--delay', '30', '--hold', '5s'], async (srv) => {
      const e = await fails(sdk.refund(srv, { key: 'k-late', timeout: 700 }));
      assert.ok(e.timeout);
      const again = await fails(sdk.refund(srv, { key: 'k-late' }));
      assert.equal(again.status, rules[sdk.name].inFlight.status);
      assert.equal(again.code, rules[sdk.name].inFlight.code);
      const s = await srv.session();
      assert.equal(s.ledger.effects, 0, 'nothing committed yet');
    }));

  if (sdk.read) {
    test(`${sdk.name}: a pending refund that ends failed reads ${pendingWords[sdk.name].join(', then ')}`, () =>
      withServe(sdk, ['--faults', 'pending', '--resolve', 'failed', '--delay', '2'], async (srv) => {
        const r = await sdk.refund(srv, { key: 'k-pending' });
        assert.equal(await sdk.read(srv, r.id), pendingWords[sdk.name][0]);
        await srv.advance(3);
        assert.equal(await sdk.read(srv, r.id), pendingWords[sdk.name][1]);
        const s = await srv.session();
        assert.equal(verdictOf(s, 'refund-1042'), 'failed_cleanly');
      }));
  }

  test(`${sdk.name}: a key reused with another amount`, () =>
    withServe(sdk, [], async (srv) => {
      const first = await sdk.refund(srv, { key: 'k-reused', amount: 4500 });
      const m = rules[sdk.name].mismatch;
      if (m === null) {
        const again = await sdk.refund(srv, { key: 'k-reused', amount: 100 });
        assert.equal(again.id, first.id, 'the first refund replayed');
      } else {
        const e = await fails(sdk.refund(srv, { key: 'k-reused', amount: 100 }));
        assert.equal(e.status, m.status);
        assert.equal(e.code, m.code);
      }
      const s = await srv.session();
      assert.equal(s.ledger.effects, 1);
    }));

  test(`${sdk.name}: a second full refund past the capture is refused`, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replaylab-captured-'));
    const file = path.join(dir, 'captured.yaml');
    fs.writeFileSync(file, capturedMission(charges[sdk.name]));
    return withServe(sdk, ['--missions', dir, '--mission', 'captured-twice'], async (srv) => {
      await sdk.refund(srv, { key: 'k-a' });
      const e = await fails(sdk.refund(srv, { key: 'k-b', intent: 'refund-1042-again' }));
      assert.equal(e.status, rules[sdk.name].overLimit.status);
      assert.equal(e.code, rules[sdk.name].overLimit.code);
      const s = await srv.session();
      assert.equal(s.ledger.effects, 1);
    }).finally(() => fs.rmSync(dir, { recursive: true, force: true }));
  });
}

// capturedMission is a mission whose charge captured 45.00, with two
// intents that would each refund all of it.
function capturedMission(charge) {
  return `id: captured-twice
title: Two full refunds of one capture
goal: |
  The charge captured 45.00; a second refund of it all is refused.
captured:
  ${charge}: "45.00"
intents:
  - id: refund-1042
    op: refund
    principal: support-agent
    label: full refund of 45.00
    payload: {charge: ${charge}, amount: "45.00"}
  - id: refund-1042-again
    op: refund
    principal: support-agent
    label: the same full refund, sent as another
    payload: {charge: ${charge}, amount: "45.00"}
schedule:
  - attempt: refund-1042
    fixture: success
  - attempt: refund-1042-again
    fixture: success
expect:
  - effects: 1
    verdicts: {refund-1042: exactly_once, refund-1042-again: failed_cleanly}
`;
}
