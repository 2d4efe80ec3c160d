// stripe-node 23.1.0, unchanged, against replaylab serve: the scenarios
// serve's stripe-go tests play (serve/stripe_test.go), and the parts of
// Stripe's behaviour a client reads (headers, Stripe-Should-Retry, the
// held reply, the refund object, update, cancel, created filters,
// refusals). Each test starts its own serve and stops it.
//
// Run: npm ci && node --test   (in this directory)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';
import { startServe, creates, verdictOf } from './serve.mjs';

// client is stripe-node pointed at serve, with the given timeout (ms) and
// network retries.
function client(srv, { timeout = 5000, maxNetworkRetries = 0 } = {}) {
  return new Stripe('sk_test_stripenode', {
    host: '127.0.0.1', port: srv.port, protocol: 'http', timeout, maxNetworkRetries,
  });
}

const refund1042 = () => ({ charge: 'ch_1042', amount: 4500, metadata: { intent: 'refund-1042' } });

// withServe runs body against a fresh serve and stops it after, whatever
// happens.
async function withServe(args, body) {
  const srv = await startServe(args);
  try {
    return await body(srv);
  } finally {
    await srv.stop();
  }
}

test('a network retry after a lost reply reuses its generated key: one refund', () =>
  withServe(['--faults', 'timeout_after_commit'], async (srv) => {
    const r = await client(srv, { timeout: 400, maxNetworkRetries: 2 }).refunds.create(refund1042());
    const s = await srv.session();
    const cs = creates(s);
    assert.equal(cs.length, 2, 'stripe-node sent the create twice');
    assert.ok(cs[0].key && cs[0].key === cs[1].key, `keys ${cs.map((c) => c.key)}`);
    assert.equal(s.ledger.effects, 1);
    assert.equal(r.id, s.ledger.objects[0].id);
    assert.equal(r.lastResponse.headers['idempotent-replayed'], 'true');
    assert.equal(verdictOf(s, 'refund-1042'), 'exactly_once');
  }));

test('calling create again after the error mints a new key: two refunds', () =>
  withServe(['--faults', 'timeout_after_commit'], async (srv) => {
    const stripe = client(srv, { timeout: 400 });
    await assert.rejects(stripe.refunds.create(refund1042()), (e) => e.type === 'StripeConnectionError');
    await stripe.refunds.create(refund1042());
    const s = await srv.session();
    const cs = creates(s);
    assert.equal(cs.length, 2);
    assert.notEqual(cs[0].key, cs[1].key);
    assert.equal(s.ledger.effects, 2);
    assert.equal(verdictOf(s, 'refund-1042'), 'duplicate');
  }));

test('a lost reply is held until stripe-node gives up: a timeout, no reset, no retry', () =>
  withServe(['--faults', 'timeout_after_commit'], async (srv) => {
    await assert.rejects(client(srv, { timeout: 800 }).refunds.create(refund1042()),
      (e) => e.type === 'StripeConnectionError' && /timeout/i.test(e.message));
    const s = await srv.session();
    assert.equal(creates(s).length, 1, 'with maxNetworkRetries 0, one create');
    assert.equal(verdictOf(s, 'refund-1042'), 'hidden_effect');
  }));

test('a hold shorter than the client waits reads as a reset, which stripe-node retries even with maxNetworkRetries 0', () =>
  withServe(['--faults', 'timeout_after_commit', '--hold', '200ms'], async (srv) => {
    await client(srv, { timeout: 5000 }).refunds.create(refund1042());
    const s = await srv.session();
    const cs = creates(s);
    assert.equal(cs.length, 2, 'the closed connection was retried once');
    assert.equal(cs[0].key, cs[1].key, 'with the same generated key');
    assert.equal(s.ledger.effects, 1);
  }));

test('a 409 in flight is retried with the same key, as Stripe-Should-Retry: true asks', () =>
  withServe(['--faults', 'late_commit', '--delay', '1000'], async (srv) => {
    await assert.rejects(client(srv, { timeout: 400 }).refunds.create(refund1042(), { idempotencyKey: 'intent-refund-1042' }));
    const err = await client(srv, { maxNetworkRetries: 2 }).refunds.create(refund1042(), { idempotencyKey: 'intent-refund-1042' })
      .then(() => null, (e) => e);
    assert.ok(err, 'the conflict answered');
    assert.equal(err.statusCode, 409);
    assert.equal(err.code, 'idempotency_key_in_use');
    assert.equal(err.headers['stripe-should-retry'], 'true');
    const s = await srv.session();
    assert.equal(creates(s).length, 4, 'the first, then the 409 and its 2 retries');
    assert.equal(s.ledger.effects, 0, 'nothing committed yet: the first is still executing');
  }));

test('a saved 500 is not retried when Stripe-Should-Retry says false', () =>
  withServe(['--faults', 'server_error_after_commit'], async (srv) => {
    const err = await client(srv, { maxNetworkRetries: 2 }).refunds.create(refund1042()).then(() => null, (e) => e);
    assert.equal(err?.statusCode, 500);
    assert.equal(err.type, 'StripeAPIError');
    assert.equal(err.headers['stripe-should-retry'], 'false');
    const s = await srv.session();
    assert.equal(creates(s).length, 1);
    assert.equal(verdictOf(s, 'refund-1042'), 'hidden_effect');
  }));

test('without Stripe-Should-Retry (--should-retry omit), stripe-node retries the saved 500 and replays it', () =>
  withServe(['--faults', 'server_error_after_commit', '--should-retry', 'omit'], async (srv) => {
    const err = await client(srv, { maxNetworkRetries: 2 }).refunds.create(refund1042()).then(() => null, (e) => e);
    assert.equal(err?.statusCode, 500);
    const s = await srv.session();
    assert.equal(creates(s).length, 3, 'the 500, then 2 retries with the same key');
    assert.equal(s.ledger.effects, 1, 'the key replays the saved 500: one refund');
  }));

test('a read-back through list and retrieve tells the client of the hidden refund', () =>
  withServe(['--faults', 'timeout_after_commit'], async (srv) => {
    const stripe = client(srv, { timeout: 400 });
    await assert.rejects(stripe.refunds.create(refund1042()));
    const found = [];
    for await (const r of stripe.refunds.list({ charge: 'ch_1042' })) found.push(r);
    assert.equal(found.length, 1);
    assert.equal(found[0].status, 'succeeded');
    assert.equal(found[0].metadata.intent, 'refund-1042');
    const got = await stripe.refunds.retrieve(found[0].id);
    assert.equal(got.amount, 4500);
    assert.equal(verdictOf(await srv.session(), 'refund-1042'), 'exactly_once');
  }));

test('every reply carries Request-Id and Stripe-Version; a replay names the original request', () =>
  withServe([], async (srv) => {
    const stripe = client(srv);
    const first = await stripe.refunds.create(refund1042(), { idempotencyKey: 'k1' });
    const again = await stripe.refunds.create(refund1042(), { idempotencyKey: 'k1' });
    assert.match(first.lastResponse.requestId, /^req_\d+$/);
    assert.equal(first.lastResponse.headers['original-request'], first.lastResponse.requestId);
    assert.equal(again.lastResponse.headers['original-request'], first.lastResponse.requestId);
    assert.notEqual(again.lastResponse.requestId, first.lastResponse.requestId);
    assert.equal(again.lastResponse.headers['idempotent-replayed'], 'true');
    assert.equal(first.lastResponse.headers['stripe-version'], Stripe.API_VERSION, 'answered in the version stripe-node asked for');
    const missing = await stripe.refunds.retrieve('re_9999').then(() => null, (e) => e);
    assert.equal(missing?.statusCode, 404);
    assert.match(missing.requestId, /^req_\d+$/);
    assert.equal(missing.headers['stripe-version'], Stripe.API_VERSION);
    const bad = await stripe.refunds.create({ charge: 'ch_1', amount: 1 }).then(() => null, (e) => e);
    assert.equal(bad?.statusCode, 400);
    assert.match(bad.requestId, /^req_\d+$/);
  }));

test('a key reused with other metadata is an idempotency error, as at Stripe', () =>
  withServe([], async (srv) => {
    const stripe = client(srv);
    await stripe.refunds.create({ charge: 'ch_1', amount: 1500, metadata: { intent: 'refund-a' } }, { idempotencyKey: 'shared' });
    const err = await stripe.refunds.create({ charge: 'ch_1', amount: 1500, metadata: { intent: 'refund-b' } }, { idempotencyKey: 'shared' })
      .then(() => null, (e) => e);
    assert.equal(err?.type, 'StripeIdempotencyError');
    assert.equal(err.statusCode, 400);
    assert.equal((await srv.session()).ledger.effects, 1);
  }));

test('the refund has every field of the Refund type, null where unset', () =>
  withServe([], async (srv) => {
    const r = await client(srv).refunds.create(refund1042());
    for (const f of ['customer', 'customer_account', 'description', 'destination_details', 'failure_balance_transaction',
      'failure_reason', 'instructions_email', 'next_action', 'payment_method', 'pending_reason', 'presentment_details',
      'receipt_number', 'source_transfer_reversal', 'transfer_reversal', 'balance_transaction']) {
      assert.ok(Object.hasOwn(r, f), `no ${f}`);
      assert.equal(r[f], null, `${f} is ${JSON.stringify(r[f])}`);
    }
    assert.equal(r.object, 'refund');
    assert.equal(r.charge, 'ch_1042');
    assert.equal(r.payment_intent, null);
  }));

test('update sets metadata; cancel ends a pending refund; the list filters by created', () =>
  withServe(['--faults', 'pending,success', '--delay', '1000'], async (srv) => {
    const stripe = client(srv);
    const pending = await stripe.refunds.create(refund1042(), { idempotencyKey: 'k-pending' });
    assert.equal(pending.status, 'pending');
    assert.equal(pending.pending_reason, 'processing');
    const canceled = await stripe.refunds.cancel(pending.id);
    assert.equal(canceled.status, 'canceled');
    const other = await stripe.refunds.create({ charge: 'ch_2', amount: 100, metadata: { intent: 'refund-2' } });
    const updated = await stripe.refunds.update(other.id, { metadata: { ticket: 'T-9' } });
    assert.equal(updated.metadata.ticket, 'T-9');
    assert.equal(updated.metadata.intent, 'refund-2');
    const cannot = await stripe.refunds.cancel(other.id).then(() => null, (e) => e);
    assert.equal(cannot?.type, 'StripeInvalidRequestError');
    const since = await stripe.refunds.list({ created: { gte: pending.created } });
    assert.equal(since.data.length, 2);
    const before = await stripe.refunds.list({ created: { lt: pending.created } });
    assert.equal(before.data.length, 0);
    const s = await srv.session();
    assert.equal(s.ledger.effects, 1, 'the canceled refund is no effect');
    assert.equal(verdictOf(s, 'refund-1042'), 'failed_cleanly');
    assert.equal(verdictOf(s, 'refund-2'), 'exactly_once');
  }));

test('expand is refused with Stripe\'s words, not ignored', () =>
  withServe([], async (srv) => {
    const stripe = client(srv);
    const r = await stripe.refunds.create(refund1042());
    const err = await stripe.refunds.retrieve(r.id, { expand: ['charge'] }).then(() => null, (e) => e);
    assert.equal(err?.type, 'StripeInvalidRequestError');
    assert.match(err.message, /cannot be expanded/);
  }));

test('metadata over Stripe\'s limits and charge with payment_intent are refused with 400s', () =>
  withServe([], async (srv) => {
    const stripe = client(srv);
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    for (const [what, params, words] of [
      ['51 keys', { charge: 'ch_1', amount: 1, metadata: { ...many, intent: 'i' } }, /up to 50 keys/],
      ['a 41-character key', { charge: 'ch_1', amount: 1, metadata: { intent: 'i', ['k'.repeat(41)]: 'v' } }, /Invalid key/],
      ['a 501-character value', { charge: 'ch_1', amount: 1, metadata: { intent: 'i', note: 'v'.repeat(501) } }, /Invalid val/],
      ['charge and payment_intent', { charge: 'ch_1', payment_intent: 'pi_1', amount: 1, metadata: { intent: 'i' } }, /not both/],
    ]) {
      const err = await stripe.refunds.create(params).then(() => null, (e) => e);
      assert.equal(err?.statusCode, 400, what);
      assert.match(err.message, words, what);
    }
    assert.equal((await srv.session()).ledger.effects, 0);
  }));
