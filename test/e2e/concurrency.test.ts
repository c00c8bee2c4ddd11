import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime } from '../helpers/local.js';

let runtime: LocalRuntime;
let api: ReturnType<typeof client>;

const MESSAGES = 600;
const CONSUMERS = 8;

beforeAll(async () => {
  runtime = await startRuntime();
  api = client(runtime.url);
  await api.put('/v1/topics/work', { type: 'standard' });
  await api.put('/v1/groups/workers', { subscriptions: [{ topic: 'work' }], visibilityTimeoutSeconds: 60 });
  await api.put('/v1/groups/auditors', { subscriptions: [{ topic: 'work' }], visibilityTimeoutSeconds: 60 });
});
afterAll(async () => runtime?.stop());

/** One consumer: receive, commit, until `stop()` says everything arrived. */
async function consume(group: string, committed: string[], done: () => boolean) {
  let idle = 0;
  while (!done() && idle < 40) {
    const got = await api.post(`/v1/groups/${group}/receive`, { maxMessages: 10, waitSeconds: 1 });
    expect(got.status).toBe(200);
    const messages = got.body.messages as Array<{ messageId: string; receiptHandle: string }>;
    if (messages.length === 0) {
      idle++;
      continue;
    }
    idle = 0;
    const result = await api.post(`/v1/groups/${group}/commit`, { entries: messages.map((m) => ({ receiptHandle: m.receiptHandle })) });
    expect(result.status).toBe(200);
    result.body.results.forEach((r: { status?: string }, i: number) => {
      if (r.status === 'committed') committed.push(messages[i]!.messageId);
    });
  }
}

describe('many concurrent consumers in one group', () => {
  it(`commits each of ${MESSAGES} messages exactly once per group, and loses none`, async () => {
    const sentIds: string[] = [];
    const producers = Array.from({ length: 4 }, async (_, p) => {
      for (let b = 0; b < MESSAGES / 4 / 25; b++) {
        const entries = Array.from({ length: 25 }, (_, i) => ({ body: `p${p}-b${b}-${i}` }));
        const res = await api.post('/v1/topics/work/messages/batch', { entries });
        expect(res.status).toBe(200);
        for (const r of res.body.results) {
          expect(r.messageId).toBeTypeOf('string');
          sentIds.push(r.messageId);
        }
      }
    });
    const workers: string[] = [];
    const auditors: string[] = [];
    const finished = (list: string[]) => () => list.length >= MESSAGES;
    await Promise.all([
      ...producers,
      ...Array.from({ length: CONSUMERS }, () => consume('workers', workers, finished(workers))),
      ...Array.from({ length: 2 }, () => consume('auditors', auditors, finished(auditors))),
    ]);
    expect(new Set(sentIds).size).toBe(MESSAGES);
    for (const list of [workers, auditors]) {
      expect(list.length).toBe(MESSAGES); // no duplicate commits
      expect(new Set(list)).toEqual(new Set(sentIds)); // none lost
    }
    const stats = await api.get('/v1/groups/workers');
    expect(stats.body).toMatchObject({ backlog: 0, inFlight: 0, committed: MESSAGES });
  }, 180_000);
});
