import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { inject } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime, TOKEN } from '../helpers/local.js';
import { spawnRuntime } from '../helpers/process.js';
import { tableName } from '../helpers/stores.js';

let runtime: LocalRuntime;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  runtime = await startRuntime();
  api = client(runtime.url);
  await api.put('/v1/topics/jobs', { type: 'standard' });
  await api.put('/v1/groups/workers', { subscriptions: [{ topic: 'jobs' }] });
});
afterAll(async () => runtime?.stop());

async function collect(c: ReturnType<typeof client>, group: string, count: number, seconds: number) {
  const got: Array<{ body: string; at: number; messageId: string; deliverableAt: number }> = [];
  const deadline = Date.now() + seconds * 1000;
  while (got.length < count && Date.now() < deadline) {
    const res = await c.post(`/v1/groups/${group}/receive`, { maxMessages: 10, waitSeconds: 1 });
    const at = Date.now();
    for (const m of res.body.messages ?? []) {
      got.push({ body: m.body, at, messageId: m.messageId, deliverableAt: Date.parse(m.deliverableAt) });
      await c.post(`/v1/groups/${group}/commit`, { entries: [{ receiptHandle: m.receiptHandle }] });
    }
  }
  return got;
}

describe('scheduled delivery over HTTP', () => {
  it('delivers delays of 1–10 s no earlier than due and within 1 s after', async () => {
    const delays = [1, 2, 3, 5, 7, 10];
    const due = new Map<string, number>();
    await Promise.all(
      delays.map(async (d) => {
        const res = await api.post('/v1/topics/jobs/messages', { body: `d${d}`, delaySeconds: d });
        expect(res.status).toBe(201);
        expect(res.body.state).toBe('scheduled');
        due.set(`d${d}`, Date.parse(res.body.deliverAt));
      }),
    );
    const got = await collect(api, 'workers', delays.length, 20);
    expect(got.map((g) => g.body).sort()).toEqual(delays.map((d) => `d${d}`).sort());
    for (const g of got) {
      const dueAt = due.get(g.body) ?? 0;
      // Never early, as the consumer sees it.
      expect(g.at - dueAt, g.body).toBeGreaterThanOrEqual(0);
      // Released (entered its stream, deliverableAt) within 1 s of deliverAt: the timer's precision.
      expect(g.deliverableAt - dueAt, g.body).toBeGreaterThanOrEqual(0);
      expect(g.deliverableAt - dueAt, g.body).toBeLessThanOrEqual(1000);
      // And in the consumer's hands soon after, even on a loaded test machine.
      expect(g.at - dueAt, g.body).toBeLessThanOrEqual(3000);
    }
  }, 40_000);

  it('delivers a deliverAt in the past at once and refuses 3 days + 1 s', async () => {
    const past = await api.post('/v1/topics/jobs/messages', { body: 'past', deliverAt: new Date(Date.now() - 5000).toISOString() });
    expect(past.body.state).toBe('deliverable');
    const tooFar = await api.post('/v1/topics/jobs/messages', { body: 'far', delaySeconds: 3 * 86_400 + 1 });
    expect(tooFar).toMatchObject({ status: 400, body: { code: 'DelayTooLong' } });
    const both = await api.post('/v1/topics/jobs/messages', { body: 'x', delaySeconds: 1, deliverAt: Date.now() });
    expect(both.status).toBe(400);
    expect((await collect(api, 'workers', 1, 5)).map((g) => g.body)).toEqual(['past']);
  });

  it('cancels a scheduled message', async () => {
    const sent = await api.post('/v1/topics/jobs/messages', { body: 'never', delaySeconds: 2 });
    expect((await api.del(`/v1/topics/jobs/messages/${sent.body.messageId}`)).status).toBe(204);
    expect((await api.del(`/v1/topics/jobs/messages/${sent.body.messageId}`)).body).toMatchObject({ status: 409 });
    expect((await api.get(`/v1/topics/jobs/messages/${sent.body.messageId}`)).body).toMatchObject({ state: 'cancelled' });
    expect(await collect(api, 'workers', 1, 3)).toEqual([]);
  });

  it('delivers every pending timer after the runtime is killed and restarted', async () => {
    const endpoint = dynamoEndpoint();
    const table = tableName('restart');
    let proc = await spawnRuntime({ endpoint, table, token: TOKEN });
    let c = client(proc.url);
    await c.put('/v1/topics/t', { type: 'fifo' });
    await c.put('/v1/groups/g', { subscriptions: [{ topic: 't' }], deliveryMode: 'concurrent' });
    const bodies = Array.from({ length: 8 }, (_, i) => `m${i}`);
    for (const [i, body] of bodies.entries()) {
      const res = await c.post('/v1/topics/t/messages', { body, shardKey: `s${i % 2}`, delaySeconds: 3 + (i % 3) });
      expect(res.body.state).toBe('scheduled');
    }
    await proc.kill('SIGKILL'); // no chance to clean up: in-process timers are gone
    proc = await spawnRuntime({ endpoint, table, token: TOKEN });
    c = client(proc.url);
    try {
      const got = await collect(c, 'g', bodies.length, 20);
      expect(got.map((g) => g.body).sort()).toEqual(bodies);
    } finally {
      await proc.kill('SIGTERM');
    }
  }, 90_000);
});
