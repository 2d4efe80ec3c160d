// The four official SDKs, each pointed at replaylab serve on its
// provider's wire without a change to the SDK, behind one face the
// scenarios share: refund(srv, {key, amount, intent, timeout}) resolves
// with {status, id, refund} or rejects with {timeout} or {status, code};
// read(srv, id) resolves with the refund's status in the provider's words.
//
// Each SDK keeps its own defaults (retries, timeouts) but the timeout a
// scenario sets: what it does by itself is what the tests measure.

import https from 'node:https';
import net from 'node:net';
import adyenLib from '@adyen/api-library';
import { Client as PayPalClient, Environment, PaymentsController } from '@paypal/paypal-server-sdk';
import { SquareClient } from 'square';
import { Checkout } from 'checkout-sdk-node';

const { Client: AdyenClient, CheckoutAPI, EnvironmentEnum } = adyenLib;

// The charge each wire refunds, in that provider's terms.
export const charges = { adyen: 'PSP1042', paypal: 'CAP1042', square: 'PAY1042', checkout: 'pay_1042' };

// Adyen: @adyen/api-library 32.1.0 calls Checkout API v72 over HTTPS only;
// serve runs with --tls, and the client takes its certificate unchecked
// (certificatePath "unencrypted", the library's own switch for it). The
// base URL is the ModificationsApi's baseUrl field.
const adyen = {
  name: 'adyen',
  serveArgs: ['--provider', 'adyen', '--tls'],
  async refund(srv, { key, amount = 4500, intent = 'refund-1042', timeout = 5000 }) {
    const client = new AdyenClient({ apiKey: 'AQE_test_replaylab', environment: EnvironmentEnum.TEST, connectionTimeoutMillis: timeout, certificatePath: 'unencrypted' });
    const mods = new CheckoutAPI(client).ModificationsApi;
    mods.baseUrl = `${srv.url}/v72`;
    try {
      const r = await mods.refundCapturedPayment(charges.adyen, { merchantAccount: 'ReplaylabECOM', amount: { currency: 'EUR', value: amount }, reference: intent },
        key ? { idempotencyKey: key } : undefined);
      return { status: 201, id: r.pspReference, refund: r };
    } catch (e) {
      if (e.name === 'HttpClientException') throw { status: e.statusCode, code: e.errorCode, error: e };
      // ApiException: the socket hung up (a timeout or a closed
      // connection); it carries no response.
      throw { timeout: true, error: e };
    }
  },
  read: null, // Adyen tells a refund's outcome only by webhook
};

// PayPal: the base URL is fixed to PayPal's hosts; the SDK's documented
// httpClientOptions.httpsAgent takes an agent whose connections go to
// serve instead, over plain HTTP on loopback.
class LoopbackAgent extends https.Agent {
  constructor(port) {
    super({ keepAlive: false });
    this.target = { port, host: '127.0.0.1' };
  }
  createConnection(_opts, cb) {
    const s = net.createConnection(this.target);
    if (cb) s.once('connect', () => cb(null, s));
    return s;
  }
}

function paypalPayments(srv, timeout) {
  const client = new PayPalClient({
    environment: Environment.Sandbox,
    clientCredentialsAuthCredentials: { oAuthClientId: 'replaylab-client', oAuthClientSecret: 'secret' },
    timeout,
    httpClientOptions: { timeout, httpsAgent: new LoopbackAgent(srv.port) },
  });
  return new PaymentsController(client);
}

function paypalError(e) {
  if (e && typeof e.statusCode === 'number') {
    let issue;
    try { issue = (e.result ?? JSON.parse(e.body))?.details?.[0]?.issue; } catch { issue = undefined; }
    return { status: e.statusCode, code: issue, error: e };
  }
  return { timeout: true, error: e };
}

const paypal = {
  name: 'paypal',
  serveArgs: ['--provider', 'paypal'],
  async refund(srv, { key, amount = 4500, intent = 'refund-1042', timeout = 5000 }) {
    const payments = paypalPayments(srv, timeout);
    try {
      const { result, statusCode } = await payments.refundCapturedPayment({
        captureId: charges.paypal, paypalRequestId: key, prefer: 'return=representation',
        body: { amount: { value: (amount / 100).toFixed(2), currencyCode: 'USD' }, customId: intent },
      });
      return { status: statusCode, id: result.id, refund: result };
    } catch (e) {
      throw paypalError(e);
    }
  },
  async read(srv, id) {
    const { result } = await paypalPayments(srv, 5000).getRefund({ refundId: id });
    return result.status;
  },
};

// Square: baseUrl is the client's own option.
function squareClient(srv, timeout) {
  return new SquareClient({ token: 'EAAA_replaylab', baseUrl: srv.url, timeoutInSeconds: timeout / 1000 });
}

const square = {
  name: 'square',
  serveArgs: ['--provider', 'square'],
  async refund(srv, { key, amount = 4500, intent = 'refund-1042', timeout = 5000 }) {
    try {
      const r = await squareClient(srv, timeout).refunds.refundPayment({
        idempotencyKey: key, paymentId: charges.square, amountMoney: { amount: BigInt(amount), currency: 'USD' }, reason: intent,
      });
      return { status: 200, id: r.refund.id, refund: r.refund };
    } catch (e) {
      if (typeof e.statusCode === 'number') throw { status: e.statusCode, code: e.errors?.[0]?.code, error: e };
      throw { timeout: true, error: e };
    }
  },
  async read(srv, id) {
    const r = await squareClient(srv, 5000).refunds.get({ refundId: id });
    return r.refund.status;
  },
};

// Checkout.com: host is the SDK's own option; axios is its client that
// keeps a timeout (the default fetch client waits for Node's 300 s).
function checkoutClient(srv, timeout) {
  return new Checkout('sk_sbox_m73dzbpy7cf3gfd46xr4yj5xo4e', { host: srv.url, httpClient: 'axios', timeout });
}

const checkout = {
  name: 'checkout',
  serveArgs: ['--provider', 'checkout'],
  async refund(srv, { key, amount = 4500, intent = 'refund-1042', timeout = 5000 }) {
    try {
      const r = await checkoutClient(srv, timeout).payments.refund(charges.checkout, { amount, currency: 'USD', reference: intent }, key);
      return { status: 202, id: r.action_id, refund: r };
    } catch (e) {
      if (e.name === 'ApiTimeout' || e.http_code === undefined) throw { timeout: true, error: e };
      throw { status: e.http_code, code: e.body?.error_codes?.[0] ?? e.body?.error_type, error: e };
    }
  },
  async read(srv, id) {
    const actions = await checkoutClient(srv, 5000).payments.getActions(charges.checkout);
    const a = actions.find((x) => x.id === id);
    return a ? a.response_summary : undefined;
  },
};

export const sdks = [adyen, paypal, square, checkout];
