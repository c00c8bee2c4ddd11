/** The push group endpoint: signatures as Sluice makes them, the SPEC §3.9 body, the retry answer, both adapters. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPushHandler, WebhookVerificationError, type PushedMessage, type PushHandlerResult } from '../../lib/client/index.js';
import { newSigningSecret, signedHeaders } from '../../lib/services/webhook-signing.js';

const secret = newSigningSecret();
const previous = newSigningSecret();
const stranger = newSigningSecret();

const message = (messageId: string, body: string, encoding: 'utf8' | 'base64' = 'utf8') => ({
  messageId,
  topic: 'orders',
  body,
  encoding,
  tag: 'created',
  keys: ['order-42'],
  properties: { source: 'test' },
  shardKey: 'customer-7',
  sequence: 12,
  sentAt: '2026-12-01T10:00:00.000Z',
  deliverableAt: '2026-12-01T10:00:00.000Z',
  deliveryCount: 1,
});
const messages = [message('m1', '{"orderId":42}'), message('m2', Buffer.from([0, 1, 2, 255]).toString('base64'), 'base64'), message('m3', 'plain text')];
const payload = JSON.stringify({ type: 'messages', timestamp: '2026-12-01T10:00:00.000Z', data: { group: 'billing', messages } });

/** Headers exactly as the pusher makes them (lib/services/webhook-signing.ts), by default signed now with `secret`. */
const signed = (body: string, options: { secrets?: string[]; at?: number; id?: string } = {}) =>
  signedHeaders(options.secrets ?? [secret], options.id ?? 'psh_01TEST', options.at ?? Date.now(), body, 'Sluice-Push/1');

function endpoint(result: PushHandlerResult | void = undefined, extra: { toleranceSeconds?: number; secrets?: string[] } = {}) {
  const handler = vi.fn(async (_messages: PushedMessage[], _context: { group: string; webhookId: string }) => result);
  const onError = vi.fn();
  const push = extra.secrets ? createPushHandler({ secrets: extra.secrets, handler, onError, toleranceSeconds: extra.toleranceSeconds }) : createPushHandler({ secret, handler, onError, toleranceSeconds: extra.toleranceSeconds });
  return { push, handler, onError };
}

describe('createPushHandler', () => {
  it('verifies, decodes bodies per encoding, calls the handler once with the batch in order and answers 200 {retry: []}', async () => {
    const { push, handler } = endpoint();
    const response = await push.handle({ headers: signed(payload), body: payload });
    expect(response).toEqual({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"retry":[]}' });
    expect(handler).toHaveBeenCalledOnce();
    const [got, context] = handler.mock.calls[0]!;
    expect(context).toEqual({ group: 'billing', webhookId: 'psh_01TEST' });
    expect(got.map((m) => m.messageId)).toEqual(['m1', 'm2', 'm3']);
    expect(got[0]).toEqual({ ...messages[0], body: '{"orderId":42}' });
    expect(got[1]!.encoding).toBe('base64');
    expect(Buffer.isBuffer(got[1]!.body)).toBe(true);
    expect([...(got[1]!.body as Buffer)]).toEqual([0, 1, 2, 255]);
    expect(got[2]!.body).toBe('plain text');
  });

  it('answers the ids the handler asks to retry, only ids of this request, each once', async () => {
    const { push } = endpoint({ retry: ['m3', 'm1', 'm3', 'not-in-this-request'] });
    const response = await push.handle({ headers: signed(payload), body: payload });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ retry: ['m3', 'm1'] });
  });

  it('answers 500 when the handler throws or returns a retry that is not a list', async () => {
    const onError = vi.fn();
    const throwing = createPushHandler({ secret, handler: async () => Promise.reject(new Error('db down')), onError });
    expect((await throwing.handle({ headers: signed(payload), body: payload })).statusCode).toBe(500);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'db down' }));
    const nonsense = createPushHandler({ secret, handler: () => ({ retry: 'm1' as never }) });
    expect((await nonsense.handle({ headers: signed(payload), body: payload })).statusCode).toBe(500);
  });

  it.each([
    ['a signature made with another secret', () => ({ headers: signed(payload, { secrets: [stranger] }), body: payload })],
    ['a body changed after signing', () => ({ headers: signed(payload), body: payload.replace('order-42', 'order-43') })],
    ['a signature for another webhook id', () => ({ headers: { ...signed(payload), 'webhook-id': 'psh_other' }, body: payload })],
    ['a timestamp older than 5 minutes', () => ({ headers: signed(payload, { at: Date.now() - 301_000 }), body: payload })],
    ['a timestamp more than 5 minutes ahead', () => ({ headers: signed(payload, { at: Date.now() + 301_000 }), body: payload })],
    ['a timestamp that is not a number', () => ({ headers: { ...signed(payload), 'webhook-timestamp': '1e9' }, body: payload })],
    ['no signature headers', () => ({ headers: { 'content-type': 'application/json' }, body: payload })],
    ['an unknown signature version', () => ({ headers: { ...signed(payload), 'webhook-signature': signed(payload)['webhook-signature']!.replace('v1,', 'v2,') }, body: payload })],
  ])('rejects %s with 401 without calling the handler', async (_name, request) => {
    const { push, handler, onError } = endpoint();
    const response = await push.handle(request());
    expect(response.statusCode).toBe(401);
    expect(handler).not.toHaveBeenCalled();
    expect(onError).toHaveBeenCalledWith(expect.any(WebhookVerificationError));
  });

  it('accepts a request Sluice signed with the new and the previous secret (rotation), given either of them', async () => {
    const headers = signed(payload, { secrets: [secret, previous] });
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secrets of [[secret], [previous], [stranger, previous]]) {
      const { push, handler } = endpoint(undefined, { secrets });
      expect((await push.handle({ headers, body: payload })).statusCode, String(secrets.length)).toBe(200);
      expect(handler).toHaveBeenCalledOnce();
    }
    const { push } = endpoint(undefined, { secrets: [stranger] });
    expect((await push.handle({ headers, body: payload })).statusCode).toBe(401);
  });

  it('honours toleranceSeconds', async () => {
    const old = signed(payload, { at: Date.now() - 90_000 });
    expect((await endpoint(undefined, { toleranceSeconds: 60 }).push.handle({ headers: old, body: payload })).statusCode).toBe(401);
    expect((await endpoint(undefined, { toleranceSeconds: 120 }).push.handle({ headers: old, body: payload })).statusCode).toBe(200);
    const older = signed(payload, { at: Date.now() - 600_000 });
    expect((await endpoint(undefined, { toleranceSeconds: 900 }).push.handle({ headers: older, body: payload })).statusCode).toBe(200);
  });

  it('refuses signed bodies that are not pushes with 400', async () => {
    const { push, handler } = endpoint();
    for (const body of [
      'not json',
      '[1,2]',
      '{"type":"transaction.check","data":{}}',
      '{"type":"messages","data":{"group":"billing"}}',
      JSON.stringify({ type: 'messages', data: { group: 'billing', messages: [{ ...messages[0], encoding: 'hex' }] } }),
    ]) {
      expect((await push.handle({ headers: signed(body), body })).statusCode, body).toBe(400);
    }
    expect(handler).not.toHaveBeenCalled();
  });

  it('fails at creation without a secret, with a malformed one, or with both secret and secrets', () => {
    const handler = () => undefined;
    expect(() => createPushHandler({ handler })).toThrow(/signing secret/);
    expect(() => createPushHandler({ secrets: [], handler })).toThrow(/signing secret/);
    expect(() => createPushHandler({ secret: 'whsec_', handler })).toThrow();
    expect(() => createPushHandler({ secret, secrets: [previous], handler })).toThrow(/not both/);
    expect(() => createPushHandler({ secret, handler, toleranceSeconds: 0 })).toThrow(/toleranceSeconds/);
  });

  it('serves a Lambda function URL event, base64 bodies included', async () => {
    const { push, handler } = endpoint({ retry: ['m2'] });
    const headers = signed(payload);
    const plain = await push.lambdaHandler({ headers, body: payload, isBase64Encoded: false, requestContext: { http: { method: 'POST' } } });
    expect(plain).toMatchObject({ statusCode: 200, body: '{"retry":["m2"]}' });
    const encoded = await push.lambdaHandler({ headers, body: Buffer.from(payload).toString('base64'), isBase64Encoded: true, requestContext: { http: { method: 'POST' } } });
    expect(encoded).toMatchObject({ statusCode: 200, body: '{"retry":["m2"]}' });
    expect((await push.lambdaHandler({ headers: signed(payload, { secrets: [stranger] }), body: payload })).statusCode).toBe(401);
    expect((await push.lambdaHandler({ headers, requestContext: { http: { method: 'GET' } } })).statusCode).toBe(405);
    expect(handler).toHaveBeenCalledTimes(2);
  });

  describe('as a Node http / Express (req, res) handler', () => {
    let server: Server;
    let url: string;
    const handler = vi.fn(async (batch: PushedMessage[]) => ({ retry: batch.filter((m) => m.encoding === 'base64').map((m) => m.messageId) }));
    const listener = createPushHandler({ secret, handler }).requestListener;

    beforeAll(async () => {
      server = createServer((req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
        if (req.url === '/parsed') {
          // What express.json() leaves behind: the stream read, an object on req.body.
          req.resume();
          req.on('end', () => {
            req.body = { parsed: true };
            listener(req, res);
          });
        } else if (req.url === '/raw') {
          // What express.raw() leaves behind: the stream read, the bytes on req.body.
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            req.body = Buffer.concat(chunks);
            listener(req, res);
          });
        } else listener(req, res);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

    it('verifies and answers over HTTP, from the stream or from a raw body middleware', async () => {
      for (const path of ['/push', '/raw']) {
        const ok = await fetch(url + path, { method: 'POST', headers: signed(payload), body: payload });
        expect(ok.status, path).toBe(200);
        expect(await ok.json()).toEqual({ retry: ['m2'] });
      }
      const bad = await fetch(`${url}/push`, { method: 'POST', headers: signed(payload, { secrets: [stranger] }), body: payload });
      expect(bad.status).toBe(401);
      expect((await fetch(`${url}/push`)).status).toBe(405);
      expect(handler).toHaveBeenCalledTimes(2);
    });

    it('answers 500 (not a silent accept) when a body parser consumed the bytes the signature covers', async () => {
      const response = await fetch(`${url}/parsed`, { method: 'POST', headers: signed(payload), body: payload });
      expect(response.status).toBe(500);
      expect(handler).toHaveBeenCalledTimes(2);
    });
  });
});
