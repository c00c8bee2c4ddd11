/** Redrive over HTTP (issue 17 item 3): POST /v1/groups/{g}/redrive on the local runtime. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime, unique } from '../helpers/local.js';

let runtime: LocalRuntime;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  runtime = await startRuntime();
  api = client(runtime.url);
});
afterAll(async () => runtime?.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A topic, a group with maxDeliveries 1 and another that commits, and `n` messages the first dead-letters. */
let run = 0;
async function deadLettered(n: number) {
  run++;
  const T = unique(`rd-orders-${run}`);
  const G = unique(`rd-billing-${run}`);
  const other = unique(`rd-shipping-${run}`);
  expect((await api.put(`/v1/topics/${T}`, { type: 'standard' })).status).toBe(200);
  expect((await api.put(`/v1/groups/${G}`, { subscriptions: [{ topic: T }], maxDeliveries: 1 })).status).toBe(200);
  expect((await api.put(`/v1/groups/${other}`, { subscriptions: [{ topic: T }] })).status).toBe(200);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await api.post(`/v1/topics/${T}/messages`, { body: `m${i}`, keys: [`k${i}`] })).body.messageId);
  const first = await api.post(`/v1/groups/${G}/receive`, { maxMessages: 10, visibilityTimeoutSeconds: 1 });
  expect(first.body.messages).toHaveLength(n);
  await sleep(1_100);
  expect((await api.post(`/v1/groups/${G}/receive`, { maxMessages: 10 })).body.messages).toEqual([]);
  const shipped = await api.post(`/v1/groups/${other}/receive`, { maxMessages: 10 });
  const commits = await api.post(`/v1/groups/${other}/commit`, { entries: shipped.body.messages.map((m: { receiptHandle: string }) => ({ receiptHandle: m.receiptHandle })) });
  expect(commits.status).toBe(200);
  return { T, G, other, ids };
}

describe('POST /v1/groups/{group}/redrive', () => {
  it('brings the dead letters back to this group only, same ids, deliveryCount 1; stats and query follow', async () => {
    const { T, G, other, ids } = await deadLettered(3);
    expect((await api.get(`/v1/groups/${G}`)).body.deadLettered).toBe(3);

    const redrive = await api.post(`/v1/groups/${G}/redrive`, {});
    expect(redrive).toMatchObject({ status: 200, body: { redriven: 3, more: false } });

    const back = (await api.post(`/v1/groups/${G}/receive`, { maxMessages: 10, waitSeconds: 1 })).body.messages;
    expect(back.map((m: { messageId: string }) => m.messageId).sort()).toEqual([...ids].sort());
    expect(back.every((m: { deliveryCount: number; topic: string }) => m.deliveryCount === 1 && m.topic === T)).toBe(true);
    expect((await api.post(`/v1/groups/${other}/receive`, { maxMessages: 10 })).body.messages).toEqual([]);
    expect((await api.get(`/v1/groups/${G}`)).body).toMatchObject({ deadLettered: 0, inFlight: 3 });

    const view = (await api.get(`/v1/topics/${T}/messages/${ids[0]}`)).body;
    const mine = view.groups.find((g: { group: string }) => g.group === G);
    expect(mine).toMatchObject({ state: 'in-flight', deliveryCount: 1, deadLetter: { topic: `${G}-dlq` } });
    // The copy stays in the dead-letter topic, found by key.
    expect((await api.get(`/v1/topics/${G}-dlq/messages?key=k0`)).body.messages).toHaveLength(1);

    const commit = await api.post(`/v1/groups/${G}/commit`, { entries: back.map((m: { receiptHandle: string }) => ({ receiptHandle: m.receiptHandle })) });
    expect(commit.body.results.every((r: { status?: string }) => r.status === 'committed')).toBe(true);
    expect(await api.post(`/v1/groups/${G}/redrive`, { maxMessages: 1000 })).toMatchObject({ status: 200, body: { redriven: 0, more: false } });
  });

  it('works after the original topic was deleted', async () => {
    const { T, G, ids } = await deadLettered(1);
    expect((await api.del(`/v1/topics/${T}`)).status).toBe(204);
    expect(await api.post(`/v1/groups/${G}/redrive`, { maxMessages: 5 })).toMatchObject({ status: 200, body: { redriven: 1, more: false } });
    const [m] = (await api.post(`/v1/groups/${G}/receive`, { maxMessages: 10, waitSeconds: 1 })).body.messages;
    expect(m).toMatchObject({ messageId: ids[0], topic: T, body: 'm0', deliveryCount: 1 });
  });

  it('answers precise 4xx problems to bad input and changes nothing', async () => {
    const { G } = await deadLettered(1);
    const cases: Array<[unknown, string]> = [
      [{ maxMessages: 0 }, 'maxMessages'],
      [{ maxMessages: 1001 }, 'maxMessages'],
      [{ maxMessages: 1.5 }, 'maxMessages'],
      [{ maxMessages: '5' }, 'maxMessages'],
      [{ max: 5 }, ''],
    ];
    for (const [body, path] of cases) {
      const res = await api.post(`/v1/groups/${G}/redrive`, body);
      expect(res).toMatchObject({ status: 400, body: { code: 'InvalidArgument' } });
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      if (path) expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect(await api.post(`/v1/groups/${unique('rd-nobody')}/redrive`, {})).toMatchObject({ status: 404, body: { code: 'GroupNotFound' } });
    expect(await api.post('/v1/groups/bad%20name/redrive', {})).toMatchObject({ status: 400, body: { code: 'InvalidArgument', errors: [{ path: 'path/group' }] } });
    // Nothing changed: the dead letter is still there, and a good request brings it back.
    expect((await api.get(`/v1/groups/${G}`)).body.deadLettered).toBe(1);
    expect(await api.post(`/v1/groups/${G}/redrive`, {})).toMatchObject({ status: 200, body: { redriven: 1 } });
  });
});
