/** Operating a queue over HTTP (issue 17): listing and deleting groups, PATCH, producers, visibility. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime, unique } from '../helpers/local.js';

const T = unique('ops-orders');

let runtime: LocalRuntime;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  runtime = await startRuntime();
  api = client(runtime.url);
  expect((await api.put(`/v1/topics/${T}`, { type: 'standard' })).status).toBe(200);
});
afterAll(async () => runtime?.stop());

describe('groups', () => {
  it('lists groups by name, paged', async () => {
    const names = ['ops-list-a', 'ops-list-b', 'ops-list-c'].map(unique);
    for (const name of names) expect((await api.put(`/v1/groups/${name}`, { subscriptions: [{ topic: T }] })).status).toBe(200);
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: { groups: Array<{ name: string }>; nextToken: string | null } } = await api.get(
        `/v1/groups?limit=2${token ? `&nextToken=${encodeURIComponent(token)}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.groups.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.groups.map((g) => g.name));
      token = res.body.nextToken;
      pages++;
    } while (token !== null && pages < 50);
    for (const name of names) expect(seen).toContain(name);
    expect(seen).toEqual([...seen].sort());
  });

  it('answers 400 to a bad limit or page token, 404 to an unknown group, 400 to a bad name', async () => {
    expect(await api.get('/v1/groups?limit=0')).toMatchObject({ status: 400, body: { code: 'InvalidArgument', errors: [{ path: 'query/limit' }] } });
    expect(await api.get('/v1/groups?nextToken=bm9wZQ')).toMatchObject({ status: 400, body: { code: 'InvalidArgument', errors: [{ path: 'nextToken' }] } });
    expect(await api.del(`/v1/groups/${unique('ops-never')}`)).toMatchObject({ status: 404, body: { code: 'GroupNotFound' } });
    expect(await api.del('/v1/groups/bad%20name')).toMatchObject({ status: 400, body: { code: 'InvalidArgument', errors: [{ path: 'path/group' }] } });
  });

  it('deletes a group with leases in flight: 204, then its handles answer 404 GroupNotFound and its DLQ stays', async () => {
    const G = unique('ops-doomed');
    expect((await api.put(`/v1/groups/${G}`, { subscriptions: [{ topic: T }] })).status).toBe(200);
    for (const body of ['1', '2', '3']) expect((await api.post(`/v1/topics/${T}/messages`, { body })).status).toBe(201);
    const leased = (await api.post(`/v1/groups/${G}/receive`, { maxMessages: 2, waitSeconds: 1 })).body.messages;
    expect(leased).toHaveLength(2);

    const deleted = await api.del(`/v1/groups/${G}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();

    const commit = await api.post(`/v1/groups/${G}/commit`, { entries: [{ receiptHandle: leased[0].receiptHandle }] });
    expect(commit).toMatchObject({ status: 404, body: { code: 'GroupNotFound' } });
    expect(commit.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(await api.post(`/v1/groups/${G}/visibility`, { receiptHandle: leased[1].receiptHandle, visibilityTimeoutSeconds: 0 })).toMatchObject({
      status: 404,
      body: { code: 'GroupNotFound' },
    });
    expect(await api.post(`/v1/groups/${G}/receive`, {})).toMatchObject({ status: 404, body: { code: 'GroupNotFound' } });
    expect(await api.get(`/v1/groups/${G}`)).toMatchObject({ status: 404, body: { code: 'GroupNotFound' } });
    expect(await api.del(`/v1/groups/${G}`)).toMatchObject({ status: 404, body: { code: 'GroupNotFound' } });
    expect((await api.get(`/v1/topics/${G}-dlq`)).status).toBe(200);
    expect((await api.get(`/v1/topics/${T}`)).body.subscribers).not.toContain(G);

    // Other containers may serve the group from their catalog cache for 5 s: re-creating it waits for twice that.
    const early = await api.put(`/v1/groups/${G}`, { subscriptions: [{ topic: T }] });
    expect(early).toMatchObject({ status: 409, body: { code: 'GroupRecentlyDeleted' } });
    expect(Number(early.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(early.headers.get('retry-after'))).toBeLessThanOrEqual(10);
    expect((await api.get('/v1/groups')).body.groups.map((g: { name: string }) => g.name)).not.toContain(G);
  });
});

describe('PATCH', () => {
  it('changes only the given fields of a group and a topic; PUT replaces them', async () => {
    const G = unique('ops-patched');
    const put = await api.put(`/v1/groups/${G}`, { subscriptions: [{ topic: T }], visibilityTimeoutSeconds: 45, maxDeliveries: 7 });
    expect(put.status).toBe(200);
    const patched = await api.request('PATCH', `/v1/groups/${G}`, { maxDeliveries: 3 });
    expect(patched).toMatchObject({ status: 200, body: { name: G, visibilityTimeoutSeconds: 45, maxDeliveries: 3, subscriptions: [{ topic: T }] } });
    const replaced = await api.put(`/v1/groups/${G}`, { subscriptions: [{ topic: T }] });
    expect(replaced.body).toMatchObject({ visibilityTimeoutSeconds: 30, maxDeliveries: 16 });

    const topic = unique('ops-patched-topic');
    expect((await api.put(`/v1/topics/${topic}`, { type: 'standard', retentionSeconds: 7200, maxDelaySeconds: 60 })).status).toBe(200);
    expect(await api.request('PATCH', `/v1/topics/${topic}`, { retentionSeconds: 3600 })).toMatchObject({
      status: 200,
      body: { retentionSeconds: 3600, maxDelaySeconds: 60, type: 'standard' },
    });
    expect(await api.request('PATCH', `/v1/topics/${topic}`, { type: 'fifo' })).toMatchObject({ status: 409, body: { code: 'Conflict' } });
    expect((await api.get(`/v1/topics/${topic}`)).body).toMatchObject({ type: 'standard', retentionSeconds: 3600 });
  });

  it('refuses bad input with a precise 4xx and changes nothing', async () => {
    const G = unique('ops-patch-bad');
    expect((await api.put(`/v1/groups/${G}`, { subscriptions: [{ topic: T }] })).status).toBe(200);
    const before = (await api.get(`/v1/groups/${G}`)).body;
    expect(await api.request('PATCH', `/v1/groups/${G}`, { maxDeliveries: 0 })).toMatchObject({ status: 400, body: { errors: [{ path: 'maxDeliveries' }] } });
    expect(await api.request('PATCH', `/v1/groups/${G}`, { colour: 'red' })).toMatchObject({ status: 400, body: { code: 'InvalidArgument' } });
    expect(await api.request('PATCH', `/v1/groups/${G}`, { subscriptions: [] })).toMatchObject({ status: 400, body: { errors: [{ path: 'subscriptions' }] } });
    expect(await api.request('PATCH', `/v1/groups/${G}`, { subscriptions: [{ topic: unique('ops-nope') }] })).toMatchObject({ status: 404, body: { code: 'TopicNotFound' } });
    expect(await api.request('PATCH', `/v1/groups/${unique('ops-nobody')}`, { maxDeliveries: 2 })).toMatchObject({ status: 404, body: { code: 'GroupNotFound' } });
    expect(await api.request('PATCH', `/v1/topics/${unique('ops-nope')}`, { retentionSeconds: 600 })).toMatchObject({ status: 404, body: { code: 'TopicNotFound' } });
    expect(await api.request('PATCH', `/v1/topics/${T}`, { retentionSeconds: 10 })).toMatchObject({ status: 400, body: { errors: [{ path: 'retentionSeconds' }] } });
    expect((await api.get(`/v1/groups/${G}`)).body).toEqual(before);
  });
});

describe('producers', () => {
  it('lists, gets and deletes producer groups; 409 ProducerInUse while a half message is unresolved', async () => {
    const P = unique('ops-shop');
    const created = await api.put(`/v1/producers/${P}`, { checkerUrl: 'http://127.0.0.1:9/check' });
    expect(created.status).toBe(200);
    const listed = await api.get('/v1/producers?limit=100');
    expect(listed.status).toBe(200);
    expect(listed.body.producers.map((p: { name: string }) => p.name)).toContain(P);
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');
    expect((await api.get(`/v1/producers/${P}`)).body).toMatchObject({ name: P, checkerUrl: 'http://127.0.0.1:9/check' });

    const sent = await api.post(`/v1/topics/${T}/messages`, { body: 'half', transaction: { producerGroup: P, checkAfterSeconds: 3600 } });
    expect(sent).toMatchObject({ status: 201, body: { state: 'prepared' } });
    const refused = await api.del(`/v1/producers/${P}`);
    expect(refused).toMatchObject({ status: 409, body: { code: 'ProducerInUse' } });
    expect((await api.get(`/v1/producers/${P}`)).status).toBe(200);

    expect((await api.post(`/v1/transactions/${sent.body.transactionId}/rollback`, undefined)).status).toBe(200);
    expect((await api.del(`/v1/producers/${P}`)).status).toBe(204);
    expect(await api.get(`/v1/producers/${P}`)).toMatchObject({ status: 404, body: { code: 'ProducerGroupNotFound' } });
    expect(await api.del(`/v1/producers/${P}`)).toMatchObject({ status: 404, body: { code: 'ProducerGroupNotFound' } });
    expect(await api.get('/v1/producers?limit=0')).toMatchObject({ status: 400, body: { errors: [{ path: 'query/limit' }] } });
  });
});

describe('dead-letter copies', () => {
  it('names the copy in the original’s query; the copy is found by key and says why', async () => {
    const G = unique('ops-poisoned');
    expect((await api.put(`/v1/groups/${G}`, { subscriptions: [{ topic: T }], maxDeliveries: 1 })).status).toBe(200);
    const key = unique('ops-poison-key');
    const sent = await api.post(`/v1/topics/${T}/messages`, { body: 'poison', keys: [key], tag: 't1', properties: { a: 'b' } });
    const [lease] = (await api.post(`/v1/groups/${G}/receive`, { waitSeconds: 1 })).body.messages;
    expect(lease.messageId).toBe(sent.body.messageId);
    expect((await api.post(`/v1/groups/${G}/visibility`, { receiptHandle: lease.receiptHandle, visibilityTimeoutSeconds: 0 })).status).toBe(204);
    expect((await api.post(`/v1/groups/${G}/receive`, { waitSeconds: 0 })).body.messages).toEqual([]);

    const view = await api.get(`/v1/topics/${T}/messages/${sent.body.messageId}`);
    const mine = view.body.groups.find((g: { group: string }) => g.group === G);
    expect(mine).toMatchObject({ state: 'dead-lettered', deliveryCount: 1, deadLetter: { topic: `${G}-dlq` } });
    const copy = await api.get(`/v1/topics/${G}-dlq/messages/${mine.deadLetter.messageId}`);
    expect(copy.body).toMatchObject({
      body: 'poison',
      tag: 't1',
      keys: [key],
      properties: { a: 'b', 'sluice-dead-letter-group': G, 'sluice-dead-letter-reason': 'released', 'sluice-dead-letter-source-message-id': sent.body.messageId },
    });
    const byKey = await api.get(`/v1/topics/${G}-dlq/messages?key=${key}`);
    expect(byKey.body.messages.map((m: { messageId: string }) => m.messageId)).toEqual([mine.deadLetter.messageId]);
  });
});
