// Adyen tells a refund's outcome only by webhook: serve posts REFUND
// notifications to --webhook, signed so that @adyen/api-library's own
// HmacValidator accepts them, and the delivery meets its faults (a lost
// notification, one sent twice).
//
// Run: npm ci && node --test   (in this directory)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import adyenLib from '@adyen/api-library';
import { startServe } from '../stripe-node/serve.mjs';
import { sdks } from './sdks.mjs';

const HmacValidator = adyenLib.hmacValidator;
const adyen = sdks.find((s) => s.name === 'adyen');
const hmacKey = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';

// receiver is a webhook endpoint on loopback that keeps what it is sent
// and answers [accepted], as Adyen asks.
async function receiver() {
  const got = [];
  let wake = () => {};
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      got.push(JSON.parse(body));
      res.end('[accepted]');
      wake();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/adyen/webhooks`,
    got,
    // until resolves once n notifications came, or rejects after ms.
    until(n, ms = 10000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`${got.length} of ${n} notifications came`)), ms);
        const check = () => { if (got.length >= n) { clearTimeout(t); resolve(got); } };
        wake = check;
        check();
      });
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function withHooks(args, body) {
  const hooks = await receiver();
  const srv = await startServe([...adyen.serveArgs, '--webhook', hooks.url, '--webhook-hmac', hmacKey, '--tick', '100ms', ...args]);
  try {
    return await body(srv, hooks);
  } finally {
    await srv.stop();
    await hooks.close();
  }
}

test('a refund that succeeds is told by a REFUND notification the library validates', () =>
  withHooks([], async (srv, hooks) => {
    const r = await adyen.refund(srv, { key: 'k-1' });
    const [n] = await hooks.until(1);
    const item = n.notificationItems[0].NotificationRequestItem;
    assert.equal(n.live, 'false');
    assert.equal(item.eventCode, 'REFUND');
    assert.equal(item.success, 'true');
    assert.equal(item.pspReference, r.id);
    assert.equal(item.originalReference, 'PSP1042');
    assert.equal(item.merchantReference, 'refund-1042');
    assert.ok(new HmacValidator().validateHMAC(item, hmacKey), 'the signature validates');
    item.success = 'false';
    assert.equal(new HmacValidator().validateHMAC(item, hmacKey), false, 'a changed item does not');
  }));

test('a pending refund that ends failed is told when it fails: success "false"', () =>
  withHooks(['--faults', 'pending', '--resolve', 'failed', '--delay', '3'], async (srv, hooks) => {
    const r = await adyen.refund(srv, { key: 'k-1' });
    assert.equal(r.refund.status, 'received', 'the 201 says only that the refund was received');
    assert.equal(hooks.got.length, 0, 'nothing is told while it is pending');
    const [n] = await hooks.until(1);
    const item = n.notificationItems[0].NotificationRequestItem;
    assert.equal(item.success, 'false');
    assert.ok(new HmacValidator().validateHMAC(item, hmacKey));
  }));

test('delivery faults: the first notification is lost, the second comes twice', () =>
  withHooks(['--webhook-faults', 'lost,twice'], async (srv, hooks) => {
    await adyen.refund(srv, { key: 'k-1', intent: 'refund-a' });
    await adyen.refund(srv, { key: 'k-2', intent: 'refund-b' });
    await hooks.until(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refs = hooks.got.map((n) => n.notificationItems[0].NotificationRequestItem.merchantReference);
    assert.deepEqual(refs, ['refund-b', 'refund-b']);
  }));
