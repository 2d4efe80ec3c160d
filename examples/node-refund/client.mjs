// A guarded refund client for `replaylab conform`, in JavaScript, written
// from docs/conform.md and docs/serve.md alone, without the project's source:
// the check that those pages are enough for a client in another language.
// Node 20, no dependencies: global fetch, node:fs, node:crypto, node:path.
//
// stdout: exactly one belief line per intent. Everything else goes to stderr.

import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

const env = process.env;
const API_BASE = (env.REPLAYLAB_API_BASE || '').replace(/\/+$/, '');
const API_KEY = env.REPLAYLAB_API_KEY || '';
const SCENARIO = env.REPLAYLAB_SCENARIO || '';
const STATE_DIR = env.REPLAYLAB_STATE_DIR || '';
const TIMEOUT_MS = Number(env.REPLAYLAB_REQUEST_TIMEOUT_MS || 5000);
const RETENTION_MS = Number(env.REPLAYLAB_KEY_RETENTION_MS || 0);

// A short wait: the docs say the request timeout is 10 ticks, so one tick.
const SHORT_WAIT_MS = Math.max(20, Math.floor(TIMEOUT_MS / 10));
const MAX_SENDS = 20;                       // hard cap on creates per intent per run
const POLL_BUDGET_MS = 20 * TIMEOUT_MS;     // after this a pending refund is reported pending
const LIST_TRIES = 3;

function log(intent, ...args) {
  process.stderr.write(`[client ${SCENARIO}${intent ? ' ' + intent : ''} +${Math.round(performance.now())}ms] ${args.join(' ')}\n`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function emitBelief(intent, belief, refund, evidence) {
  const line = { intent, belief };
  if (refund) line.refund = refund;
  line.evidence = evidence;
  process.stdout.write(JSON.stringify(line) + '\n');
}

// ---------------------------------------------------------------- durable state

function fsyncDir(dir) {
  let fd;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (e) {
    log('', 'fsync of directory failed:', e.message);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function recordPath(intent) {
  const safe = intent.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64);
  const h = crypto.createHash('sha256').update(intent).digest('hex').slice(0, 16);
  return path.join(STATE_DIR, `intent-${safe}-${h}.json`);
}

function readRecord(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

// Mint a key once per intent, store it with the payload and the time it was
// minted, atomically: write a temp file, fsync it, hard-link it to the final
// name (link fails if the name exists, so two workers end with one record).
// Returns { rec, existed }.
function ensureRecord(intent, payload) {
  const file = recordPath(intent);
  if (fs.existsSync(file)) return { rec: readRecord(file), existed: true };
  const rec = {
    intent,
    key: `${intent}-${crypto.randomUUID()}`,
    payload,
    minted_at: Date.now(),
  };
  const tmp = path.join(STATE_DIR, `.tmp-${process.pid}-${crypto.randomUUID()}`);
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeSync(fd, JSON.stringify(rec) + '\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(tmp, file);
    fsyncDir(STATE_DIR);
    return { rec, existed: false };
  } catch (e) {
    if (e.code === 'EEXIST') return { rec: readRecord(file), existed: true };
    throw e;
  } finally {
    try { fs.unlinkSync(tmp); } catch { /* already gone */ }
  }
}

function samePayload(a, b) {
  return a.charge === b.charge && Number(a.amount) === Number(b.amount) &&
    (a.currency ?? null) === (b.currency ?? null);
}

// A resend under the stored key is safe only while the key is still kept by
// the provider for the whole of the request: (since minted + timeout) < retention.
function canResend(rec) {
  if (!(RETENTION_MS > 0)) return false;
  return (Date.now() - rec.minted_at) + TIMEOUT_MS < RETENTION_MS;
}

// ---------------------------------------------------------------- HTTP

// Returns { kind: 'reply', status, body, headers } or { kind: 'nothing', why }.
async function request(method, urlPath, { form, idemKey } = {}) {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), TIMEOUT_MS);
  const headers = { Authorization: `Bearer ${API_KEY}` };
  let body;
  if (form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(form).toString();
  }
  if (idemKey) headers['Idempotency-Key'] = idemKey;
  try {
    const res = await fetch(API_BASE + urlPath, { method, headers, body, signal: ac.signal });
    const text = await res.text();
    let json = null;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    return { kind: 'reply', status: res.status, body: json, text, headers: res.headers };
  } catch (e) {
    const why = ac.signal.aborted ? `timeout after ${TIMEOUT_MS}ms` : `connection error: ${e.cause?.code || e.message}`;
    return { kind: 'nothing', why };
  } finally {
    clearTimeout(timer);
  }
}

function createForm(intent, payload) {
  const f = { charge: payload.charge, amount: String(payload.amount) };
  if (payload.currency) f.currency = payload.currency;
  f['metadata[intent]'] = intent;
  return f;
}

// Classify the reply to a create.
function classifyCreate(r) {
  if (r.kind === 'nothing') return { cls: 'unknown', why: r.why };
  const err = r.body && r.body.error;
  if (r.status >= 200 && r.status < 300 && r.body && r.body.object === 'refund') {
    return { cls: 'refund', refund: r.body, replayed: r.headers.get('idempotent-replayed') === 'true' };
  }
  if (r.status === 409) return { cls: 'in_use', why: describe(r) };
  if (r.status === 400 && err && err.type === 'idempotency_error') return { cls: 'mismatch', why: describe(r) };
  if (r.status === 400 && err && err.type === 'invalid_request_error') return { cls: 'refused', why: describe(r) };
  // 5xx, a 2xx that is not a refund, anything else: we cannot know whether it executed.
  return { cls: 'unknown', why: describe(r) };
}

function describe(r) {
  if (r.kind === 'nothing') return r.why;
  const e = r.body && r.body.error;
  if (e) return `HTTP ${r.status} ${e.type || ''}${e.code ? '/' + e.code : ''}: ${e.message || ''}`;
  return `HTTP ${r.status} ${String(r.text || '').slice(0, 200)}`;
}

// List the charge's refunds and keep those whose metadata.intent is ours.
// Returns { ok: true, refunds: [...] } or { ok: false, why }.
async function listIntentRefunds(intent, charge) {
  let lastWhy = '';
  for (let attempt = 0; attempt < LIST_TRIES; attempt++) {
    const found = [];
    let startingAfter = null;
    let ok = true;
    for (let page = 0; page < 100; page++) {
      const q = new URLSearchParams({ charge, limit: '100' });
      if (startingAfter) q.set('starting_after', startingAfter);
      const r = await request('GET', `/v1/refunds?${q}`);
      if (r.kind !== 'reply' || r.status !== 200 || !r.body || !Array.isArray(r.body.data)) {
        ok = false;
        lastWhy = describe(r);
        break;
      }
      for (const re of r.body.data) {
        if (re && re.metadata && re.metadata.intent === intent) found.push(re);
      }
      if (!r.body.has_more || r.body.data.length === 0) break;
      startingAfter = r.body.data[r.body.data.length - 1].id;
    }
    if (ok) return { ok: true, refunds: found };
    log(intent, `list failed (${lastWhy}), try ${attempt + 1}/${LIST_TRIES}`);
    await sleep(SHORT_WAIT_MS);
  }
  return { ok: false, why: lastWhy };
}

// Poll a pending refund until it is terminal (or the budget runs out).
async function pollPending(intent, refund, how) {
  const deadline = Date.now() + POLL_BUDGET_MS;
  let cur = refund;
  while (cur.status === 'pending' && Date.now() < deadline) {
    await sleep(SHORT_WAIT_MS);
    const r = await request('GET', `/v1/refunds/${encodeURIComponent(refund.id)}`);
    if (r.kind === 'reply' && r.status === 200 && r.body && r.body.object === 'refund') {
      cur = r.body;
    } else {
      log(intent, `poll of ${refund.id} failed: ${describe(r)}`);
    }
  }
  return settleRefund(intent, cur, `${how}; polled ${refund.id}`);
}

function settleRefund(intent, refund, how) {
  if (refund.metadata && refund.metadata.intent !== undefined && refund.metadata.intent !== intent) {
    return { belief: 'escalated', refund: refund.id,
      evidence: `${how}: refund ${refund.id} carries metadata.intent=${refund.metadata.intent}, not ${intent}` };
  }
  switch (refund.status) {
    case 'succeeded': return { belief: 'done', refund: refund.id, evidence: `${how}: succeeded` };
    case 'failed': return { belief: 'failed', refund: refund.id, evidence: `${how}: refund ${refund.id} ended failed` };
    case 'pending': return { belief: 'pending', refund: refund.id, evidence: `${how}: still pending when the client stopped` };
    default: return { belief: 'escalated', refund: refund.id, evidence: `${how}: unexpected status ${refund.status}` };
  }
}

// Reconcile from a list: null when nothing for the intent was found.
async function fromListing(intent, found, how) {
  if (found.length === 0) return null;
  if (found.length > 1) {
    return { belief: 'escalated', refund: found[0].id,
      evidence: `${how}: ${found.length} refunds carry intent ${intent}: ` +
        found.map((f) => `${f.id}(${f.status},${f.amount})`).join(', ') };
  }
  const re = found[0];
  if (re.status === 'pending') return pollPending(intent, re, how);
  return settleRefund(intent, re, how);
}

// ---------------------------------------------------------------- one intent

async function runIntent(it) {
  const intent = it.intent;
  const payload = { charge: it.charge, amount: it.amount };
  if (it.currency !== undefined) payload.currency = it.currency;

  const { rec, existed } = ensureRecord(intent, payload);
  const trail = [];   // evidence
  log(intent, existed
    ? `found stored key ${rec.key} (minted ${new Date(rec.minted_at).toISOString()})`
    : `minted key ${rec.key}`);

  if (existed && !samePayload(rec.payload, payload)) {
    const l = await listIntentRefunds(intent, rec.payload.charge);
    const seen = l.ok ? (l.refunds.map((f) => `${f.id}(${f.status},${f.amount})`).join(', ') || 'none') : `list failed: ${l.why}`;
    return { belief: 'escalated', refund: l.ok && l.refunds[0] ? l.refunds[0].id : undefined,
      evidence: `payload changed for intent ${intent}: stored ${JSON.stringify(rec.payload)} under key ${rec.key} ` +
        `(minted ${new Date(rec.minted_at).toISOString()}), asked ${JSON.stringify(payload)}; ` +
        `refunds listed for the intent: ${seen}; no new key minted, nothing sent` };
  }

  // Look before sending. Required when a record was already there (a restart,
  // or another worker); done for a fresh key too, which also opens the
  // connection before the create's timeout starts to run.
  let mayFirstSend = !existed;
  {
    const what = existed ? 'stored key existed' : 'before first send';
    const l = await listIntentRefunds(intent, payload.charge);
    if (l.ok) {
      const got = await fromListing(intent, l.refunds, `found by listing (${what})`);
      if (got) return got;
      trail.push(`${what}, listing found no refund`);
    } else {
      trail.push(`${what}, list failed: ${l.why}`);
    }
  }

  for (let sends = 0; sends < MAX_SENDS; sends++) {
    if (!mayFirstSend && !canResend(rec)) {
      const age = Date.now() - rec.minted_at;
      return { belief: 'escalated',
        evidence: `${trail.join('; ')}; key ${rec.key} minted ${age}ms ago, retention ${RETENTION_MS}ms, ` +
          `timeout ${TIMEOUT_MS}ms: ` + (RETENTION_MS > 0 ? 'a resend could outlive the key' : 'provider keeps no keys') +
          ', so no resend' };
    }
    mayFirstSend = false;
    log(intent, `create (send ${sends + 1}) key ${rec.key}`);
    const r = await request('POST', '/v1/refunds', { form: createForm(intent, payload), idemKey: rec.key });
    const c = classifyCreate(r);
    log(intent, `-> ${c.cls}${c.why ? ': ' + c.why : ''}`);
    switch (c.cls) {
      case 'refund': {
        const how = c.replayed ? 'reply to create (replayed)' : 'reply to create';
        if (c.refund.status === 'pending') return pollPending(intent, c.refund, how);
        return settleRefund(intent, c.refund, how);
      }
      case 'refused':
        return { belief: 'failed', evidence: `refused before execution: ${c.why}` };
      case 'mismatch':
        return { belief: 'escalated',
          evidence: `key ${rec.key} was used with other parameters: ${c.why}; stored ${JSON.stringify(rec.payload)}` };
      case 'in_use':
        trail.push(`key in use (${c.why})`);
        await sleep(SHORT_WAIT_MS);
        continue;   // same key again (guarded by canResend at the top of the loop)
      case 'unknown': {
        trail.push(`outcome unknown (${c.why})`);
        const l = await listIntentRefunds(intent, payload.charge);
        if (l.ok) {
          const got = await fromListing(intent, l.refunds, `found by listing after ${c.why}`);
          if (got) return got;
          trail.push('listing found no refund');
        } else {
          trail.push(`list failed: ${l.why}`);
        }
        continue;   // resend with the same key only if canResend
      }
    }
  }
  return { belief: 'escalated', evidence: `${trail.join('; ')}; gave up after ${MAX_SENDS} creates under key ${rec.key}` };
}

// ---------------------------------------------------------------- main

async function main() {
  if (!API_BASE || !STATE_DIR) {
    log('', 'REPLAYLAB_API_BASE and REPLAYLAB_STATE_DIR are required');
    process.exit(2);
  }
  let intents;
  try {
    intents = JSON.parse(env.REPLAYLAB_INTENTS || '[]');
    if (!Array.isArray(intents)) throw new Error('not an array');
  } catch (e) {
    log('', `bad REPLAYLAB_INTENTS: ${e.message}`);
    process.exit(2);
  }
  fs.mkdirSync(STATE_DIR, { recursive: true });
  log('', `timeout ${TIMEOUT_MS}ms retention ${RETENTION_MS}ms, ${intents.length} intent(s)`);

  await Promise.all(intents.map(async (it) => {
    let out;
    try {
      out = await runIntent(it);
    } catch (e) {
      out = { belief: 'escalated', evidence: `client error: ${e.stack || e.message}` };
    }
    log(it.intent, `belief ${out.belief}${out.refund ? ' ' + out.refund : ''}: ${out.evidence}`);
    emitBelief(it.intent, out.belief, out.refund, out.evidence);
  }));
  process.exit(0);
}

main();
