/**
 * Standard topics at `Limits.partitionsMax` (issue 19): created and raised to the maximum, sends
 * and receives across every partition, purge and seek on it, and a raise in bounded steps.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { PartitionRaiseIncompleteError } from '../../lib/domain/errors.js';
import { Limits } from '../../lib/domain/model.js';
import { toProblem } from '../../lib/http/problem.js';
import { PartitionRaiser } from '../../lib/services/partition-raiser.js';
import { SAMPLE_SIZE } from '../../lib/services/partition-sampler.js';
import { Seeker } from '../../lib/services/seeker.js';
import { StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

const MAX = Limits.partitionsMax;
let h: Harness;

beforeEach(async () => {
  h = await newHarness();
});

const partitionCursors = async (group: string, topic: string) =>
  (await h.stores.cursors.list(group, h.clock.now())).filter((c) => c.stream.startsWith(`t:${topic}/p:`));

/** Partitions of `topic` whose stream holds a message (one head read each). */
async function written(topic: string): Promise<number> {
  let n = 0;
  for (let p = 0; p < MAX; p++) if (StreamLog.nextAfter(await h.stores.log.head(`t:${topic}/p:${p}`)) > 1) n++;
  return n;
}

/**
 * `count` sends, 64 in flight at once (more open more connections than a loaded DynamoDB Local
 * accepts in the client's 2 s): a send avoids partitions with an append of this process in flight
 * (PartitionPicker), so they spread over the partitions.
 */
async function sendWave(topic: string, prefix: string, count: number): Promise<string[]> {
  const bodies = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (let i = 0; i < count; i += 64) await Promise.all(bodies.slice(i, i + 64).map((body) => h.queue.send(topic, send(body))));
  return bodies;
}

/** Receives and commits until `count` arrived; the bodies and the number of receives it took. */
async function receiveAll(group: string, count: number, maxLooks: number): Promise<{ bodies: string[]; looks: number }> {
  const bodies: string[] = [];
  let looks = 0;
  while (bodies.length < count && looks < maxLooks) {
    looks++;
    const got = await h.queue.receive(group, { maxMessages: 100, waitSeconds: 0 });
    bodies.push(...got.map((m) => m.body));
    if (got.length > 0) await h.queue.commit(group, got.map((m) => m.receiptHandle));
  }
  return { bodies, looks };
}

describe(`a standard topic at the maximum (${MAX} partitions)`, () => {
  it('is created with every cursor; sends spread over it, receives sample it and find every message; purge and seek cover every partition', async () => {
    expect((await h.admin.putTopic('wide', build.topic({ partitions: MAX }))).topic.partitions).toBe(MAX);
    await h.admin.putGroup('g', build.group('wide'));
    expect(await partitionCursors('g', 'wide')).toHaveLength(MAX);

    const sent = await sendWave('wide', 'a', MAX);
    // Nearly every partition took one (the picker avoids partitions with an append in flight).
    expect(await written('wide')).toBeGreaterThanOrEqual(MAX / 2);
    expect((await h.admin.getTopic('wide')).approximateMessages).toBe(MAX);
    expect((await h.admin.getGroup('g')).backlog).toBe(MAX);

    // 8 partitions per look: half of them productive ones, half from the rotation, so every
    // partition is visited within 2 × MAX / SAMPLE_SIZE looks.
    const first = await receiveAll('g', MAX, (4 * MAX) / SAMPLE_SIZE);
    expect(first.bodies.sort()).toEqual([...sent].sort());
    expect(first.looks).toBeLessThanOrEqual((2 * MAX) / SAMPLE_SIZE + 2);
    console.log(`${MAX} messages over ${MAX} partitions: received in ${first.looks} receives`);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);

    // Seek back to the earliest message: every partition's cursor moves (each partition's backlog is back).
    const seek = await new Seeker(h.stores, h.clock).seek('g', 'earliest', undefined);
    expect(seek.positions).toHaveLength(MAX);
    expect(new Set(seek.positions.map((p) => p.partition)).size).toBe(MAX);
    expect((await h.admin.getGroup('g')).backlog).toBe(MAX);

    // Purge: `pw` gets one entry per partition in one conditional write; nothing purged (the
    // messages the seek brought back, and 256 more) arrives.
    await sendWave('wide', 'b', MAX);
    h.clock.advance(1);
    await h.admin.purgeTopic('wide');
    h.clock.advance(1);
    expect((await h.stores.catalog.getTopic('wide'))?.purgeStarts).toHaveLength(MAX);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);
    expect((await h.admin.getTopic('wide')).approximateMessages).toBe(0);
    expect(await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 })).toEqual([]);
    const after = await sendWave('wide', 'c', 32);
    expect((await receiveAll('g', 32, (4 * MAX) / SAMPLE_SIZE)).bodies.sort()).toEqual([...after].sort());
  }, 180_000);

  it('a raise 1 → max with three groups creates every cursor; a purged topic`s `pw` grows with it; every group has every message', async () => {
    await h.admin.putTopic('grow', build.topic({ partitions: 1 }));
    for (const g of ['g1', 'g2', 'g3']) await h.admin.putGroup(g, build.group('grow'));
    await h.admin.purgeTopic('grow');
    h.clock.advance(1);
    expect((await h.admin.patchTopic('grow', { partitions: MAX })).topic.partitions).toBe(MAX);
    expect((await h.stores.catalog.getTopic('grow'))?.purgeStarts).toHaveLength(MAX);
    for (const g of ['g1', 'g2', 'g3']) expect(await partitionCursors(g, 'grow')).toHaveLength(MAX);
    // 257 is refused at the edge (schemas.test.ts); the topic keeps its count on another PUT.
    expect((await h.admin.putTopic('grow', build.topic())).topic.partitions).toBe(MAX);

    const sent = await sendWave('grow', 'm', 64);
    expect((await receiveAll('g1', 64, (4 * MAX) / SAMPLE_SIZE)).bodies.sort()).toEqual([...sent].sort());
    for (const g of ['g2', 'g3']) expect((await h.admin.getGroup(g)).backlog).toBe(64);
  }, 180_000);

  it('a raise whose time ran out stops after a whole step (409 PartitionRaiseIncomplete); repeated, it goes on to the maximum', async () => {
    await h.admin.putTopic('steps', build.topic({ partitions: 1 }));
    for (const g of ['g1', 'g2']) await h.admin.putGroup(g, build.group('steps'));
    // Steps of 128 cursor puts: 64 partitions for two groups; no time left after the first step.
    const raiser = new PartitionRaiser(h.stores, h.clock, { stepCursorPuts: 128, timeBudgetMs: 0 });
    const reached: number[] = [];
    for (let call = 0; call < 10; call++) {
      try {
        expect((await raiser.raise('steps', MAX)).partitions).toBe(MAX);
        reached.push(MAX);
        break;
      } catch (error) {
        expect(error).toBeInstanceOf(PartitionRaiseIncompleteError);
        expect(toProblem(error).problem).toMatchObject({ status: 409, code: 'PartitionRaiseIncomplete' });
        reached.push((error as PartitionRaiseIncompleteError).reached);
      }
      // Between steps the invariant holds: every group has a cursor on every partition the topic has.
      const partitions = (await h.stores.catalog.getTopic('steps'))?.partitions ?? 0;
      for (const g of ['g1', 'g2']) expect(await partitionCursors(g, 'steps')).toHaveLength(partitions);
    }
    expect(reached).toEqual([65, 129, 193, MAX]);
    for (const g of ['g1', 'g2']) expect(await partitionCursors(g, 'steps')).toHaveLength(MAX);
  }, 180_000);
});
