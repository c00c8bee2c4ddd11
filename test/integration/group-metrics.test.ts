/**
 * The group-metrics function (issue 17 item 7) on DynamoDB Local: one EMF document per group,
 * dimension `Group` only, with the figures GET /v1/groups/{g} shows.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GROUP_METRICS } from '../../lib/adapters/aws/names.js';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;
const saved = { ...process.env };

beforeAll(async () => {
  const { doc, table, endpoint } = await testTable('metrics');
  h = harness(doc, table);
  Object.assign(process.env, { SLUICE_TABLE_NAME: table, DYNAMODB_ENDPOINT: endpoint, AWS_REGION: 'us-east-1' });
  await h.admin.putTopic('orders', topic());
  await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 300 }));
  await h.admin.putGroup('idle', group('orders'));
  await h.admin.deleteGroup('idle');
  await h.admin.putGroup('audit', group('orders'));
  await h.queue.sendBatch('orders', [send('a'), send('b'), send('c')]);
  await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 });
});
afterAll(() => {
  process.env = saved;
});

type Emf = { _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> } } & Record<string, unknown>;

describe('group-metrics function', () => {
  it('emits backlog, oldest message age, in flight and dead letters per live group', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
    const logs = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    let result: unknown;
    try {
      const { handler } = await import('../../functions/metrics/group-metrics.js');
      result = await handler({}, {} as never);
    } finally {
      spy.mockRestore();
      logs.mockRestore();
    }
    expect(result).toEqual({ groups: 2 });
    const docs = lines
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.includes('"_aws"'))
      .map((l) => JSON.parse(l) as Emf);
    expect(docs).toHaveLength(2);
    for (const doc of docs) {
      const [directive] = doc._aws.CloudWatchMetrics;
      expect(directive?.Namespace).toBe(GROUP_METRICS.namespace);
      expect(directive?.Dimensions).toEqual([['Group']]);
      expect(directive?.Metrics.map((m) => [m.Name, m.Unit]).sort()).toEqual(
        [['Backlog', 'Count'], ['DeadLettered', 'Count'], ['InFlight', 'Count'], ['OldestMessageAgeSeconds', 'Seconds']].sort(),
      );
      expect(doc).not.toHaveProperty('service');
    }
    const byGroup = new Map(docs.map((d) => [d.Group, d]));
    expect(byGroup.get('billing')).toMatchObject({ Backlog: 2, InFlight: 1, DeadLettered: 0 });
    expect(byGroup.get('audit')).toMatchObject({ Backlog: 3, InFlight: 0, DeadLettered: 0 });
    const stats = await h.admin.getGroup('billing');
    expect(byGroup.get('billing')).toMatchObject({ Backlog: stats.backlog, InFlight: stats.inFlight });
    // The function reads the real clock, the harness a fixed one from when the messages were sent.
    const age = Number(byGroup.get('audit')?.OldestMessageAgeSeconds);
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThanOrEqual(Math.ceil((Date.now() - h.clock.now()) / 1000));
    expect(byGroup.has('idle')).toBe(false);
  });
});
