/** The transaction checker endpoint: Standard Webhooks verification first, then the user's check. */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCheckerHandler, type CheckStatus, type TransactionCheck } from '../../lib/client/index.js';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
const otherSecret = `whsec_${randomBytes(24).toString('base64')}`;

const data: TransactionCheck = {
  transactionId: 't01JTESTTX',
  producerGroup: 'orders-producer',
  topic: 'orders',
  messageId: 'd01JTESTMSG',
  checkCount: 2,
  sentAt: '2026-01-02T03:04:05.000Z',
  message: { body: '{"orderId":42}', encoding: 'utf8', tag: 'created', keys: ['order-42'], properties: {}, shardKey: null },
};
const payload = JSON.stringify({ type: 'transaction.check', data });

/** Headers as Sluice sends them: webhook-id, webhook-timestamp, webhook-signature (v1,<base64 HMAC>). */
function signed(body: string, options: { secret?: string; at?: Date; id?: string } = {}) {
  const id = options.id ?? 'msg_2mKq1';
  const at = options.at ?? new Date();
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(options.secret ?? secret).sign(id, at, body),
    'content-type': 'application/json',
  };
}

function checker(answer: CheckStatus = 'commit') {
  const check = vi.fn(async (_check: TransactionCheck, _id: string) => answer);
  const onError = vi.fn();
  return { handler: createCheckerHandler({ secret, check, onError }), check, onError };
}

describe('createCheckerHandler', () => {
  it('answers the check function’s status for a correctly signed check', async () => {
    const { handler, check } = checker('rollback');
    const response = await handler.handle({ headers: signed(payload), body: payload });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'rollback' });
    expect(check).toHaveBeenCalledWith(data, 'msg_2mKq1');
  });

  it.each([
    ['a signature made with another secret', () => ({ headers: signed(payload, { secret: otherSecret }), body: payload })],
    ['a body changed after signing', () => ({ headers: signed(payload), body: payload.replace('order-42', 'order-43') })],
    ['a signature for another webhook id', () => ({ headers: { ...signed(payload), 'webhook-id': 'msg_other' }, body: payload })],
    ['a timestamp older than 5 minutes', () => ({ headers: signed(payload, { at: new Date(Date.now() - 10 * 60_000) }), body: payload })],
    ['a timestamp in the future', () => ({ headers: signed(payload, { at: new Date(Date.now() + 10 * 60_000) }), body: payload })],
    ['no signature headers', () => ({ headers: { 'content-type': 'application/json' }, body: payload })],
    ['a garbled signature', () => ({ headers: { ...signed(payload), 'webhook-signature': 'v1,bm90IGEgc2lnbmF0dXJl' }, body: payload })],
    ['an unknown signature version', () => ({ headers: { ...signed(payload), 'webhook-signature': signed(payload)['webhook-signature'].replace('v1,', 'v2,') }, body: payload })],
  ])('rejects %s with 401 without calling check', async (_name, request) => {
    const { handler, check, onError } = checker();
    const response = await handler.handle(request());
    expect(response.statusCode).toBe(401);
    expect(check).not.toHaveBeenCalled();
    expect(onError).toHaveBeenCalledOnce();
  });

  it('accepts any of several secrets (rotation)', async () => {
    const check = vi.fn(async () => 'commit' as const);
    const handler = createCheckerHandler({ secret: [otherSecret, secret], check });
    const response = await handler.handle({ headers: signed(payload, { secret }), body: payload });
    expect(response.statusCode).toBe(200);
    expect(check).toHaveBeenCalledOnce();
  });

  it('refuses signed bodies that are not transaction checks with 400', async () => {
    const { handler, check } = checker();
    for (const body of ['{"type":"something.else","data":{}}', '[1,2]', 'not json', '{"type":"transaction.check"}']) {
      const response = await handler.handle({ headers: signed(body), body });
      expect(response.statusCode, body).toBe(400);
    }
    expect(check).not.toHaveBeenCalled();
  });

  it('answers 500 (Sluice counts it as unknown) when the check throws or answers nonsense', async () => {
    const throwing = createCheckerHandler({ secret, check: async () => Promise.reject(new Error('db down')) });
    expect((await throwing.handle({ headers: signed(payload), body: payload })).statusCode).toBe(500);
    const nonsense = createCheckerHandler({ secret, check: async () => 'maybe' as never });
    expect((await nonsense.handle({ headers: signed(payload), body: payload })).statusCode).toBe(500);
  });

  it('fails at creation with a malformed secret', () => {
    expect(() => createCheckerHandler({ secret: 'whsec_', check: () => 'commit' })).toThrow();
  });

  it('serves as a Lambda handler (payload 2.0), base64 bodies included', async () => {
    const { handler } = checker('commit');
    const headers = signed(payload);
    const plain = await handler.lambdaHandler({ headers, body: payload, isBase64Encoded: false, requestContext: { http: { method: 'POST' } } });
    expect(plain).toMatchObject({ statusCode: 200, body: '{"status":"commit"}' });
    const encoded = await handler.lambdaHandler({ headers, body: Buffer.from(payload).toString('base64'), isBase64Encoded: true });
    expect(encoded.statusCode).toBe(200);
    const forged = await handler.lambdaHandler({ headers: signed(payload, { secret: otherSecret }), body: payload });
    expect(forged.statusCode).toBe(401);
    const get = await handler.lambdaHandler({ headers, requestContext: { http: { method: 'GET' } } });
    expect(get.statusCode).toBe(405);
  });

  describe('as a Node request listener', () => {
    let server: Server;
    let url: string;
    const check = vi.fn(async (c: TransactionCheck) => (c.checkCount > 1 ? ('commit' as const) : ('unknown' as const)));

    beforeAll(async () => {
      server = createServer(createCheckerHandler({ secret, check }).requestListener);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/check`;
    });
    afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

    it('verifies and answers over HTTP', async () => {
      const ok = await fetch(url, { method: 'POST', headers: signed(payload), body: payload });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ status: 'commit' });
      const bad = await fetch(url, { method: 'POST', headers: signed(payload, { secret: otherSecret }), body: payload });
      expect(bad.status).toBe(401);
      const get = await fetch(url);
      expect(get.status).toBe(405);
      expect(check).toHaveBeenCalledOnce();
    });
  });
});
