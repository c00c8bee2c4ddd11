/**
 * Bad input that bad-input.test.ts does not reach (found by an audit, 2026-12-04): tampered page
 * tokens, query parameters and bodies a route does not take, a PATCH naming both push targets, and
 * the names `.` and `..`. Each answers a precise 400 and changes nothing.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime, TOKEN, type Reply } from '../helpers/local.js';

let runtime: LocalRuntime;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  runtime = await startRuntime();
  api = client(runtime.url);
  await api.put('/v1/topics/orders', { type: 'standard' });
  await api.put('/v1/groups/billing', { subscriptions: [{ topic: 'orders' }] });
  await api.put('/v1/groups/audit', { subscriptions: [{ topic: 'orders' }] });
  await api.put('/v1/producers/payments', { checkerUrl: 'http://127.0.0.1:9/check' });
  await api.post('/v1/topics/orders/messages', { body: 'one', keys: ['k'] });
  await api.post('/v1/topics/orders/messages', { body: 'two', keys: ['k'] });
});
afterAll(async () => runtime?.stop());

function expectProblem(res: Reply, status: number, code: string, path?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
  if (path !== undefined) expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
}

const token = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');

describe('tampered page tokens', () => {
  // The token is base64url JSON of the last evaluated key; only its `pk` is checked.
  const tampered = (pk: string) => [{ pk }, { pk, sk: 5 }, { pk, sk: '' }, { pk, sk: 'a', x: 1 }];
  it.each([
    ['/v1/topics?nextToken=', 'TOPIC'],
    ['/v1/groups?nextToken=', 'GROUP'],
    ['/v1/producers?nextToken=', 'PRODUCER'],
    ['/v1/topics/orders/messages?key=k&nextToken=', 'K#orders#k'],
  ])('GET %s<tampered> answers 400 nextToken, not 500', async (prefix, pk) => {
    for (const key of tampered(pk)) {
      expectProblem(await api.get(`${prefix}${token(key)}`), 400, 'InvalidArgument', 'nextToken');
    }
  });
});

describe('parameters a route does not take are refused, not ignored', () => {
  it('DELETE /v1/groups/{g}?dryRun=true does not delete the group', async () => {
    const res = await api.request('DELETE', '/v1/groups/audit?dryRun=true');
    expectProblem(res, 400, 'InvalidArgument');
    expect((await api.get('/v1/groups/audit')).status).toBe(200);
  });

  it('POST /v1/topics/{t}/purge with a body it does not understand purges nothing', async () => {
    const before = (await api.get('/v1/groups/billing')).body.backlog;
    expect(before).toBeGreaterThan(0);
    const res = await api.post('/v1/topics/orders/purge', { olderThan: '2000-01-01T00:00:00Z' });
    expectProblem(res, 400, 'InvalidArgument');
    expect((await api.get('/v1/groups/billing')).body.backlog).toBe(before);
  });
});

describe('PATCH of a group', () => {
  it('refuses a push with both url and lambdaArn, as PUT does, and changes nothing', async () => {
    const arn = 'arn:aws:lambda:us-east-1:123456789012:function:f';
    // PUT refuses the same push settings.
    expectProblem(
      await api.put('/v1/groups/both', { subscriptions: [{ topic: 'orders' }], push: { url: 'http://127.0.0.1:9/p', lambdaArn: arn } }),
      400,
      'InvalidArgument',
      'push',
    );
    await api.put('/v1/groups/pulled', { subscriptions: [{ topic: 'orders' }] });
    const res = await api.request('PATCH', '/v1/groups/pulled', { push: { url: 'http://127.0.0.1:9/p', lambdaArn: arn } });
    expectProblem(res, 400, 'InvalidArgument', 'push');
    expect((await api.get('/v1/groups/pulled')).body.push).toBeNull();
  });
});

/** A request sent byte for byte (fetch would resolve dot segments itself). */
function raw(method: string, path: string): Promise<number> {
  const url = new URL(runtime.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('names . and ..', () => {
  it.each(['..', '.'])('a dead-letter topic named %s is refused, or can be read and deleted', async (name) => {
    const group = `dl${name.length}`;
    const res = await api.put(`/v1/groups/${group}`, { subscriptions: [{ topic: 'orders' }], deadLetterTopic: name });
    if (res.status === 400) return expectProblem(res, 400, 'InvalidArgument', 'deadLetterTopic');
    expect(res.status).toBe(200);
    // It was created: it is listed …
    expect((await api.get('/v1/topics')).body.topics.map((t: { name: string }) => t.name)).toContain(name);
    // … so its own routes must reach it (percent-encoded, as a client must send a dot segment).
    const encoded = name.replaceAll('.', '%2E');
    expect(await raw('GET', `/v1/topics/${encoded}`), `GET /v1/topics/${encoded}`).toBe(200);
    await api.request('DELETE', `/v1/groups/${group}`);
    expect(await raw('DELETE', `/v1/topics/${encoded}`), `DELETE /v1/topics/${encoded}`).toBe(204);
  });
});

describe('a body with many faults', () => {
  it('answers a 400 of bounded size, not one that names every unknown key', async () => {
    const body: Record<string, unknown> = { type: 'standard' };
    for (let i = 0; i < 20_000; i++) body[`unknown${i}`] = 1;
    const res = await api.put('/v1/topics/many-faults', body);
    expectProblem(res, 400, 'InvalidArgument');
    expect(JSON.stringify(res.body).length).toBeLessThan(8_000);
    expect((await api.get('/v1/topics/many-faults')).status).toBe(404);
  });
});
