// The careful refund tool layer, for agents on any framework: the rules of
// examples/internal/executor (and of the source article) over the
// provider's MCP tools, with the framework's own MCP client underneath.
//
//   - The idempotency key is minted here, once per intent, kept durably in
//     REPLAYLAB_STATE_DIR and sent on every call for that intent. The model
//     never mints one: it asks to refund an intent, and this layer decides
//     what crosses the wire.
//   - A call whose outcome is unknown (no result by the timeout, a closed
//     stream, an error that does not say the refund was refused) is
//     reconciled with list_refunds before anything is sent again.
//   - A resend goes under the same key, and only while the provider still
//     keeps that key for the whole of the request.
//   - What cannot be settled safely goes to a person, with the evidence.
//
// Each framework's glue hands in one function, call(tool, args), that runs
// a tool over its MCP client and says what came back as an Outcome:
//
//   { kind: 'result', value }  the tool's result (a refund, or a list)
//   { kind: 'error', text }    an error result (isError), with its text
//   { kind: 'unknown', why }   no result: a timeout, a closed stream, a
//                              transport error
//
// outcomeOf and unknownOf turn what MCP clients return and throw into one.

import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

const env = process.env;

// The contract of docs/conform.md, read once.
export const contract = {
  scenario: env.REPLAYLAB_SCENARIO || '',
  mcpURL: env.REPLAYLAB_MCP_URL || '',
  apiKey: env.REPLAYLAB_API_KEY || '',
  stateDir: env.REPLAYLAB_STATE_DIR || '',
  timeoutMs: Number(env.REPLAYLAB_REQUEST_TIMEOUT_MS || 5000),
  retentionMs: Number(env.REPLAYLAB_KEY_RETENTION_MS || 0),
  intents: JSON.parse(env.REPLAYLAB_INTENTS || '[]'),
};

export function log(who, ...args) {
  process.stderr.write(`[${who} ${contract.scenario} +${Math.round(performance.now())}ms] ${args.join(' ')}\n`);
}

// belief prints one belief line: the only thing an agent writes to stdout.
export function belief(b) {
  const line = { intent: b.intent, belief: b.belief };
  if (b.refund) line.refund = b.refund;
  if (b.evidence) line.evidence = b.evidence;
  process.stdout.write(JSON.stringify(line) + '\n');
}

// outcomeOf is the Outcome of an MCP CallToolResult ({content,
// structuredContent, isError}), or of the text a framework made of one.
export function outcomeOf(res) {
  if (typeof res === 'string') {
    try {
      return { kind: 'result', value: JSON.parse(res) };
    } catch {
      return { kind: 'error', text: res };
    }
  }
  const text = (res?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  if (res?.isError) return { kind: 'error', text };
  if (res?.structuredContent) return { kind: 'result', value: res.structuredContent };
  try {
    return { kind: 'result', value: JSON.parse(text) };
  } catch {
    return { kind: 'unknown', why: `a result that is not JSON: ${text.slice(0, 200)}` };
  }
}

// unknownOf is the Outcome of a call that threw: nothing came back.
export function unknownOf(err) {
  return { kind: 'unknown', why: String(err?.message ?? err).slice(0, 300) };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Careful is the tool layer: settle(intent) carries one intent out
// exactly once, or says why it could not.
export class Careful {
  constructor(call, who = 'careful') {
    this.call = call;
    this.who = who;
    this.shortWait = Math.max(20, Math.floor(contract.timeoutMs / 10));
    this.maxSends = 20;
    this.pollBudget = 20 * contract.timeoutMs;
  }

  // ---- durable state: one record per intent, made once (link is atomic,
  // so two runs at once end with one record and one key).

  recordPath(intent) {
    const safe = intent.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64);
    const h = crypto.createHash('sha256').update(intent).digest('hex').slice(0, 16);
    return path.join(contract.stateDir, `intent-${safe}-${h}.json`);
  }

  ensureRecord(intent, payload) {
    fs.mkdirSync(contract.stateDir, { recursive: true });
    const file = this.recordPath(intent);
    if (fs.existsSync(file)) return { rec: JSON.parse(fs.readFileSync(file, 'utf8')), existed: true };
    const rec = { intent, key: `${intent}-${crypto.randomUUID()}`, payload, minted_at: Date.now() };
    const tmp = path.join(contract.stateDir, `.tmp-${process.pid}-${crypto.randomUUID()}`);
    const fd = fs.openSync(tmp, 'wx', 0o600);
    try {
      fs.writeSync(fd, JSON.stringify(rec) + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.linkSync(tmp, file);
      return { rec, existed: false };
    } catch (e) {
      if (e.code === 'EEXIST') return { rec: JSON.parse(fs.readFileSync(file, 'utf8')), existed: true };
      throw e;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }

  // A resend under the stored key is safe only while the provider keeps
  // the key for the whole of the request.
  canResend(rec) {
    if (!(contract.retentionMs > 0)) return false;
    return Date.now() - rec.minted_at + contract.timeoutMs < contract.retentionMs;
  }

  // ---- reads

  async listed(intent) {
    let why = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      const o = await this.call('list_refunds', { intent, limit: 100 });
      if (o.kind === 'result' && Array.isArray(o.value?.refunds)) return { ok: true, refunds: o.value.refunds };
      why = o.kind === 'error' ? o.text : o.why ?? 'no list';
      log(this.who, intent, `list failed (${why}), try ${attempt + 1}/3`);
      await sleep(this.shortWait);
    }
    return { ok: false, why };
  }

  async poll(intent, refund, how) {
    const deadline = Date.now() + this.pollBudget;
    let cur = refund;
    while (cur.status === 'pending' && Date.now() < deadline) {
      await sleep(this.shortWait);
      const o = await this.call('get_refund', { id: refund.id });
      if (o.kind === 'result' && o.value?.object === 'refund') cur = o.value;
    }
    return this.settled(intent, cur, `${how}; polled ${refund.id}`);
  }

  settled(intent, r, how) {
    if (r.intent !== undefined && r.intent !== intent) {
      return { intent, belief: 'escalated', refund: r.id, evidence: `${how}: ${r.id} is for ${r.intent}, not ${intent}` };
    }
    switch (r.status) {
      case 'succeeded':
        return { intent, belief: 'done', refund: r.id, evidence: `${how}: succeeded` };
      case 'failed':
        return { intent, belief: 'failed', refund: r.id, evidence: `${how}: ${r.id} ended failed` };
      case 'pending':
        return { intent, belief: 'pending', refund: r.id, evidence: `${how}: still pending` };
      default:
        return { intent, belief: 'escalated', refund: r.id, evidence: `${how}: status ${r.status}` };
    }
  }

  // fromList settles from what a list found; null when it found nothing.
  async fromList(intent, found, how) {
    if (found.length === 0) return null;
    if (found.length > 1) {
      return { intent, belief: 'escalated', refund: found[0].id,
        evidence: `${how}: ${found.length} refunds carry ${intent}: ${found.map((f) => `${f.id}(${f.status})`).join(', ')}` };
    }
    return found[0].status === 'pending' ? this.poll(intent, found[0], how) : this.settled(intent, found[0], how);
  }

  // ---- one intent

  async settle(it) {
    const intent = it.intent;
    const payload = { charge: it.charge, amount: it.amount };
    if (it.currency !== undefined) payload.currency = it.currency;
    const { rec, existed } = this.ensureRecord(intent, payload);
    const trail = [];
    const same = rec.payload.charge === payload.charge && Number(rec.payload.amount) === Number(payload.amount) &&
      (rec.payload.currency ?? null) === (payload.currency ?? null);
    if (!same) {
      const l = await this.listed(intent);
      const seen = l.ok ? l.refunds.map((f) => `${f.id}(${f.status},${f.amount})`).join(', ') || 'none' : `list failed: ${l.why}`;
      return { intent, belief: 'escalated', refund: l.ok ? l.refunds[0]?.id : undefined,
        evidence: `asked ${JSON.stringify(payload)}, but key ${rec.key} was minted for ${JSON.stringify(rec.payload)}; refunds for the intent: ${seen}; nothing sent` };
    }

    // Look before the first send: a record already there means an earlier
    // run (or another worker) may have sent.
    let mayFirstSend = !existed;
    const what = existed ? 'a stored key' : 'before the first send';
    const l = await this.listed(intent);
    if (l.ok) {
      const got = await this.fromList(intent, l.refunds, `listed (${what})`);
      if (got) return got;
      trail.push(`${what}, no refund listed`);
    } else {
      trail.push(`${what}, list failed: ${l.why}`);
    }

    for (let sends = 0; sends < this.maxSends; sends++) {
      if (!mayFirstSend && !this.canResend(rec)) {
        return { intent, belief: 'escalated',
          evidence: `${trail.join('; ')}; key ${rec.key}, retention ${contract.retentionMs}ms, timeout ${contract.timeoutMs}ms: ` +
            (contract.retentionMs > 0 ? 'a resend could outlive the key' : 'the provider keeps no keys') + ', so no resend' };
      }
      mayFirstSend = false;
      const args = { intent, ...payload, idempotency_key: rec.key };
      log(this.who, intent, `create_refund (send ${sends + 1}) under ${rec.key}`);
      const o = await this.call('create_refund', args);
      if (o.kind === 'result' && o.value?.object === 'refund') {
        const how = 'create_refund answered';
        return o.value.status === 'pending' ? this.poll(intent, o.value, how) : this.settled(intent, o.value, how);
      }
      const text = o.kind === 'error' ? o.text : '';
      if (text.startsWith('invalid_request_error')) {
        return { intent, belief: 'failed', evidence: `refused before execution: ${text}` };
      }
      if (text.startsWith('idempotency_error (idempotency_key_in_use)')) {
        trail.push('key in use');
        await sleep(this.shortWait);
        continue;
      }
      if (text.startsWith('idempotency_error')) {
        return { intent, belief: 'escalated', evidence: `key ${rec.key} was used with other parameters: ${text}` };
      }
      // Anything else may have refunded: find out before sending again.
      const why = o.kind === 'error' ? text : o.why ?? 'no refund in the result';
      trail.push(`outcome unknown (${why})`);
      const again = await this.listed(intent);
      if (again.ok) {
        const got = await this.fromList(intent, again.refunds, `listed after ${why}`);
        if (got) return got;
        trail.push('no refund listed');
      } else {
        trail.push(`list failed: ${again.why}`);
      }
    }
    return { intent, belief: 'escalated', evidence: `${trail.join('; ')}; gave up after ${this.maxSends} sends` };
  }
}
