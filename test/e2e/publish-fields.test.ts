/**
 * `publish` entries of a commit are sends (every field but `transaction`, SPEC §3.5):
 * delaySeconds / deliverAt schedule the output atomically with the commit, dedupId
 * makes it idempotent, keys index it — and nothing exists unless the commit took effect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime } from '../helpers/local.js';

let runtime: LocalRuntime;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  runtime = await startRuntime();
  api = client(runtime.url);
  for (const topic of ['pf-in', 'pf-out']) expect((await api.put(`/v1/topics/${topic}`, { type: 'standard' })).status).toBe(200);
  expect((await api.put('/v1/topics/pf-fifo-in', { type: 'fifo' })).status).toBe(200);
  expect((await api.put('/v1/groups/pf-worker', { subscriptions: [{ topic: 'pf-in' }], visibilityTimeoutSeconds: 60 })).status).toBe(200);
  expect((await api.put('/v1/groups/pf-protected', { subscriptions: [{ topic: 'pf-fifo-in' }], deliveryMode: 'protected' })).status).toBe(200);
  expect((await api.put('/v1/groups/pf-reader', { subscriptions: [{ topic: 'pf-out' }] })).status).toBe(200);
});
afterAll(async () => runtime?.stop());

/** Sends one input message and receives it: its receipt handle. */
async function leased(body: string): Promise<string> {
  const sent = await api.post('/v1/topics/pf-in/messages', { body });
  expect(sent.status).toBe(201);
  for (let attempt = 0; attempt < 10; attempt++) {
    const res = await api.post('/v1/groups/pf-worker/receive', { maxMessages: 10, waitSeconds: 1 });
    const mine = res.body.messages.find((m: { messageId: string }) => m.messageId === sent.body.messageId);
    if (mine) return mine.receiptHandle as string;
  }
  throw new Error(`input ${body} was not received`);
}

const commit = (receiptHandle: string, publish: unknown[]) => api.post('/v1/groups/pf-worker/commit', { entries: [{ receiptHandle, publish }] });
const byKey = async (key: string) => (await api.get(`/v1/topics/pf-out/messages?key=${encodeURIComponent(key)}`)).body.messages as Array<{ messageId: string; state: string; body: string; deliverAt?: string }>;

/** Receives from the output topic for `seconds`, committing what comes. */
async function drainOutputs(seconds: number) {
  const got: Array<{ body: string; messageId: string; at: number }> = [];
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const res = await api.post('/v1/groups/pf-reader/receive', { maxMessages: 10, waitSeconds: 1 });
    for (const m of res.body.messages) got.push({ body: m.body, messageId: m.messageId, at: Date.now() });
    if (res.body.messages.length > 0) {
      await api.post('/v1/groups/pf-reader/commit', { entries: res.body.messages.map((m: { receiptHandle: string }) => ({ receiptHandle: m.receiptHandle })) });
    }
  }
  return got;
}

describe('publish entries take every send field', () => {
  it('schedules a delayed publish with the commit and releases it when due', async () => {
    const handle = await leased('in-delay');
    const deliverAt = new Date(Date.now() + 3000).toISOString();
    const res = await commit(handle, [
      { topic: 'pf-out', body: 'later', delaySeconds: 2, keys: ['pf-delay'] },
      { topic: 'pf-out', body: 'at', deliverAt, keys: ['pf-delay'] },
      { topic: 'pf-out', body: 'now', keys: ['pf-delay'] },
    ]);
    expect(res.body).toEqual({ results: [{ receiptHandle: handle, status: 'committed' }] });
    const committedAt = Date.now();
    const states = (await byKey('pf-delay')).map((m) => [m.body, m.state]).sort();
    expect(states).toEqual([
      ['at', 'scheduled'],
      ['later', 'scheduled'],
      ['now', 'deliverable'],
    ]);
    const got = await drainOutputs(6);
    expect(got.map((m) => m.body).sort()).toEqual(['at', 'later', 'now']);
    const at = (body: string) => (got.find((m) => m.body === body)?.at ?? 0) - committedAt;
    expect(at('now')).toBeLessThan(1500);
    expect(at('later')).toBeGreaterThanOrEqual(1500);
    expect(Date.now()).toBeGreaterThan(Date.parse(deliverAt));
    expect(got.find((m) => m.body === 'at')!.at).toBeGreaterThanOrEqual(Date.parse(deliverAt));
  });

  it('writes nothing for a commit that does not take effect, delayed or not', async () => {
    const handle = await leased('in-stale');
    expect((await commit(handle, [])).body.results[0].status).toBe('committed');
    const again = await api.post('/v1/groups/pf-worker/visibility', { receiptHandle: handle, visibilityTimeoutSeconds: 0 });
    expect(again.status).toBe(409);
    // The handle committed already: a repeat answers committed and publishes nothing.
    const repeat = await commit(handle, [
      { topic: 'pf-out', body: 'ghost-delayed', delaySeconds: 1, keys: ['pf-ghost'] },
      { topic: 'pf-out', body: 'ghost', keys: ['pf-ghost'] },
    ]);
    expect(repeat.body.results[0].status).toBe('committed');
    expect(await byKey('pf-ghost')).toEqual([]);
    expect((await drainOutputs(2)).map((m) => m.body)).toEqual([]);
  });

  it('publishes a dedupId once: across commits, inside one commit and against sends', async () => {
    const first = await commit(await leased('in-d1'), [
      { topic: 'pf-out', body: 'd-first', dedupId: 'pf-d', keys: ['pf-dedup'] },
      { topic: 'pf-out', body: 'd-same-commit', dedupId: 'pf-d', keys: ['pf-dedup'] },
    ]);
    expect(first.body.results[0].status).toBe('committed');
    const second = await commit(await leased('in-d2'), [
      { topic: 'pf-out', body: 'd-second', dedupId: 'pf-d', keys: ['pf-dedup'] },
      { topic: 'pf-out', body: 'd-other', dedupId: 'pf-e', keys: ['pf-dedup'] },
    ]);
    expect(second.body.results[0].status).toBe('committed');
    const found = await byKey('pf-dedup');
    expect(found.map((m) => m.body).sort()).toEqual(['d-first', 'd-other']);
    const send = await api.post('/v1/topics/pf-out/messages', { body: 'd-send', dedupId: 'pf-d' });
    expect(send.body.messageId).toBe(found.find((m) => m.body === 'd-first')?.messageId);
    expect((await drainOutputs(2)).map((m) => m.body).sort()).toEqual(['d-first', 'd-other']);
  });

  it('indexes the keys of published messages (a key given twice once)', async () => {
    const res = await commit(await leased('in-keys'), [{ topic: 'pf-out', body: 'keyed', keys: ['pf-k1', 'pf-k2', 'pf-k1'] }]);
    expect(res.body.results[0].status).toBe('committed');
    expect((await byKey('pf-k1')).map((m) => m.body)).toEqual(['keyed']);
    expect((await byKey('pf-k2')).map((m) => m.body)).toEqual(['keyed']);
    await drainOutputs(1);
  });

  it('schedules the delayed outputs of a protected commit when it completes', async () => {
    for (const body of ['p1', 'p2']) expect((await api.post('/v1/topics/pf-fifo-in/messages', { body, shardKey: 's' })).status).toBe(201);
    const leases = (await api.post('/v1/groups/pf-protected/receive', { maxMessages: 2, waitSeconds: 1 })).body.messages;
    expect(leases.map((m: { body: string }) => m.body)).toEqual(['p1', 'p2']);
    const [h1, h2] = leases.map((m: { receiptHandle: string }) => m.receiptHandle);
    const early = await api.post('/v1/groups/pf-protected/commit', { entries: [{ receiptHandle: h2, publish: [{ topic: 'pf-out', body: 'from-p2', delaySeconds: 1, keys: ['pf-prot'] }] }] });
    expect(early.body.results[0].status).toBe('pending');
    expect(await byKey('pf-prot')).toEqual([]);
    const head = await api.post('/v1/groups/pf-protected/commit', { entries: [{ receiptHandle: h1, publish: [{ topic: 'pf-out', body: 'from-p1', keys: ['pf-prot'] }] }] });
    expect(head.body.results[0].status).toBe('committed');
    expect((await byKey('pf-prot')).map((m) => [m.body, m.state]).sort()).toEqual([
      ['from-p1', 'deliverable'],
      ['from-p2', 'scheduled'],
    ]);
    expect((await drainOutputs(4)).map((m) => m.body)).toEqual(['from-p1', 'from-p2']);
  });
});
