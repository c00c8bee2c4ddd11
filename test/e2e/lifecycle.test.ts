import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime, unique } from '../helpers/local.js';

const T = unique('orders');
const G = unique('billing');

let runtime: LocalRuntime;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  runtime = await startRuntime();
  api = client(runtime.url);
  expect((await api.put(`/v1/topics/${T}`, { type: 'standard' })).status).toBe(200);
  expect((await api.put(`/v1/groups/${G}`, { subscriptions: [{ topic: T }], visibilityTimeoutSeconds: 1 })).status).toBe(200);
});
afterAll(async () => runtime?.stop());

describe('over HTTP', () => {
  it('serves health without a token', async () => {
    const res = await client(runtime.url, null).get('/health');
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('walks send → receive → commit', async () => {
    const sent = await api.post(`/v1/topics/${T}/messages`, { body: 'hello', keys: ['order-1'] });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ state: 'deliverable' });
    const got = await api.post(`/v1/groups/${G}/receive`, { maxMessages: 10, waitSeconds: 1 });
    expect(got.status).toBe(200);
    expect(got.body.messages).toHaveLength(1);
    const [message] = got.body.messages;
    expect(message).toMatchObject({ messageId: sent.body.messageId, body: 'hello', deliveryCount: 1 });
    const committed = await api.post(`/v1/groups/${G}/commit`, { entries: [{ receiptHandle: message.receiptHandle }] });
    expect(committed).toMatchObject({ status: 200, body: { results: [{ status: 'committed' }] } });
    const view = await api.get(`/v1/topics/${T}/messages/${sent.body.messageId}`);
    expect(view.body.groups).toMatchObject([{ group: G, state: 'committed', deliveryCount: 1 }]);
    const byKey = await api.get(`/v1/topics/${T}/messages?key=order-1`);
    expect(byKey.body.messages.map((m: { messageId: string }) => m.messageId)).toEqual([sent.body.messageId]);
  });

  it('redelivers an expired lease and fences the stale receipt handle', async () => {
    const sent = await api.post(`/v1/topics/${T}/messages`, { body: 'lease' });
    const first = (await api.post(`/v1/groups/${G}/receive`, { waitSeconds: 2 })).body.messages[0];
    expect(first.messageId).toBe(sent.body.messageId);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = (await api.post(`/v1/groups/${G}/receive`, { waitSeconds: 2 })).body.messages[0];
    expect(second).toMatchObject({ messageId: sent.body.messageId, deliveryCount: 2 });
    const stale = await api.post(`/v1/groups/${G}/commit`, { entries: [{ receiptHandle: first.receiptHandle }] });
    expect(stale.body.results[0].error).toMatchObject({ status: 409, code: 'ReceiptHandleExpired' });
    const visibility = await api.post(`/v1/groups/${G}/visibility`, { receiptHandle: first.receiptHandle, visibilityTimeoutSeconds: 5 });
    expect(visibility).toMatchObject({ status: 409, body: { code: 'ReceiptHandleExpired' } });
    const fresh = await api.post(`/v1/groups/${G}/commit`, { entries: [{ receiptHandle: second.receiptHandle }] });
    expect(fresh.body.results[0]).toMatchObject({ status: 'committed' });
  });

  it('long-polls: a receive waiting for messages returns as soon as one is sent', async () => {
    const started = Date.now();
    const waiting = api.post(`/v1/groups/${G}/receive`, { waitSeconds: 10 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await api.post(`/v1/topics/${T}/messages`, { body: 'wake' });
    const got = await waiting;
    expect(got.body.messages.map((m: { body: string }) => m.body)).toEqual(['wake']);
    expect(Date.now() - started).toBeLessThan(5000);
    await api.post(`/v1/groups/${G}/commit`, { entries: [{ receiptHandle: got.body.messages[0].receiptHandle }] });
  });

  it('commits the handles a receive carries, before it receives (one call instead of two)', async () => {
    const topic = unique('carry');
    const group = unique('carry-g');
    await api.put(`/v1/topics/${topic}`, { type: 'standard' });
    await api.put(`/v1/groups/${group}`, { subscriptions: [{ topic }], visibilityTimeoutSeconds: 60 });
    await api.post(`/v1/topics/${topic}/messages/batch`, { entries: [{ body: 'c1' }, { body: 'c2' }, { body: 'c3' }] });
    const first = (await api.post(`/v1/groups/${group}/receive`, { maxMessages: 1, waitSeconds: 1 })).body.messages[0];
    const next = await api.post(`/v1/groups/${group}/receive`, { maxMessages: 1, waitSeconds: 1, commit: [first.receiptHandle] });
    expect(next.status).toBe(200);
    expect(next.body.commitResults).toEqual([{ receiptHandle: first.receiptHandle, status: 'committed' }]);
    expect(next.body.messages).toHaveLength(1);
    const second = next.body.messages[0];
    expect(second.messageId).not.toBe(first.messageId);
    // A malformed handle refuses the whole request: nothing is committed, nothing received.
    const bad = await api.post(`/v1/groups/${group}/receive`, { maxMessages: 5, commit: [second.receiptHandle, 'not-a-handle'] });
    expect(bad).toMatchObject({ status: 400, body: { code: 'InvalidArgument', errors: [{ path: 'commit/1' }] } });
    expect((await api.get(`/v1/groups/${group}`)).body).toMatchObject({ inFlight: 1, backlog: 1, committed: 1 });
    // Each handle gets its own result (a repeat commit is answered committed again); the receive goes on.
    const last = await api.post(`/v1/groups/${group}/receive`, { maxMessages: 5, commit: [second.receiptHandle, first.receiptHandle] });
    expect(last.body.commitResults[0]).toMatchObject({ status: 'committed' });
    expect(last.body.commitResults[1]).toMatchObject({ status: 'committed' });
    expect(last.body.messages).toHaveLength(1);
    const done = await api.post(`/v1/groups/${group}/receive`, { maxMessages: 5, commit: [last.body.messages[0].receiptHandle] });
    expect(done.body).toMatchObject({ messages: [], commitResults: [{ status: 'committed' }] });
    expect((await api.get(`/v1/groups/${group}`)).body).toMatchObject({ inFlight: 0, backlog: 0, committed: 3 });
  });

  it('reports group statistics', async () => {
    await api.post(`/v1/topics/${T}/messages/batch`, { entries: [{ body: 'a' }, { body: 'b' }] });
    const stats = await api.get(`/v1/groups/${G}`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ name: G, backlog: 2, deadLetterTopic: `${G}-dlq` });
  });

  it('serves the OpenAPI document', async () => {
    const doc = await api.get('/v1/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toContain('/v1/groups/{group}/commit');
  });
});
