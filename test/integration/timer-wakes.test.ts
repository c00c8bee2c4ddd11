/**
 * Release wake-ups carry the ids due in their second, and release reads them
 * by key, strongly consistent — never through the due index (issue 14 item 5);
 * check-backs are armed to the second through the same timer path (item 6).
 * Local path: DynamoDB Local, recording timer adapters, a fake clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { minuteOf } from '../../lib/adapters/dynamodb/keys.js';
import * as build from '../helpers/builders.js';
import { startChecker, type TestChecker } from '../helpers/checker.js';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';

let h: Harness;
let checker: TestChecker;
/** Index queries (IndexName set) sent to DynamoDB while `recording` is on. */
let indexQueries: string[];
let recording = false;

const receive = () => h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 });
const bodies = (ms: Array<{ body: string }>) => ms.map((m) => m.body).sort();

beforeEach(async () => {
  const { client, doc, table } = await testTable();
  indexQueries = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { IndexName?: string };
      if (recording && input.IndexName !== undefined) indexQueries.push(`${context.commandName} ${input.IndexName}`);
      return next(args);
    },
    { step: 'initialize', name: 'recordIndexQueries' },
  );
  h = harness(doc, table, { checkTimeoutMs: 1000 });
  checker = await startChecker(() => 'unknown');
  await h.admin.putTopic('jobs', build.topic());
  await h.admin.putGroup('g', build.group('jobs', { visibilityTimeoutSeconds: 30 }));
});
afterEach(async () => {
  recording = false;
  await checker.close();
});

describe('release wake-ups carry their ids', () => {
  it('a delaySeconds 1 send arms one wake-up with its id; the release reads it by key, not through the due index', async () => {
    const sent = await h.queue.send('jobs', send('soon', { delaySeconds: 1 }));
    expect(h.recorded.releases).toHaveLength(1);
    const wake = h.recorded.releases[0]!;
    expect(wake.at).toBe(h.clock.now() + 1000);
    expect(wake.payload).toEqual({
      kind: 'release',
      minute: minuteOf(h.clock.now() + 1000),
      second: Math.floor((h.clock.now() + 1000) / 1000),
      ids: [sent.messageId.slice(1)],
    });
    h.clock.advance(1000);
    recording = true;
    await h.fire();
    recording = false;
    expect(indexQueries).toEqual([]);
    expect(bodies(await receive())).toEqual(['soon']);
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'deliverable' });
  });

  it('one wake-up per due second for a send batch, each with the ids of its second', async () => {
    const now = h.clock.now();
    const second = Math.floor(now / 1000) + 3;
    const results = await h.queue.sendBatch('jobs', [
      send('a', { deliverAt: second * 1000 + 100 }),
      send('b', { deliverAt: second * 1000 + 900 }),
      send('c', { deliverAt: (second + 1) * 1000 }),
    ]);
    const ids = [...results].sort((x, y) => x.index - y.index).map((r) => ('result' in r ? r.result.messageId.slice(1) : ''));
    expect(h.recorded.releases.map((w) => ({ at: w.at, second: w.payload.second, ids: w.payload.ids }))).toEqual([
      { at: second * 1000 + 100, second, ids: [ids[0], ids[1]] },
      { at: (second + 1) * 1000, second: second + 1, ids: [ids[2]] },
    ]);
    h.clock.t = second * 1000 + 100;
    recording = true;
    await h.fire(); // 'a' now; 'b' 800 ms later: the release waits it out (the injected wait moves the clock)
    recording = false;
    expect(indexQueries).toEqual([]);
    expect(bodies(await receive())).toEqual(['a', 'b']);
    h.clock.t = (second + 1) * 1000;
    await h.fire();
    expect(bodies(await receive())).toEqual(['c']);
  });

  it('a wake-up that comes early re-arms the ids not yet due, and releases a message once however often it fires', async () => {
    const sent = await h.queue.send('jobs', send('later', { delaySeconds: 30 }));
    const wake = h.recorded.releases.splice(0)[0]!;
    expect(await h.timers.onRelease(wake.payload)).toBe(0); // 30 s early
    expect(h.recorded.releases).toEqual([{ at: h.clock.now() + 30_000, payload: wake.payload }]);
    h.clock.advance(30_000);
    expect(await h.timers.onRelease(wake.payload)).toBe(1);
    expect(await h.timers.onRelease(wake.payload)).toBe(0); // delivered twice by SQS: released once
    expect(bodies(await receive())).toEqual(['later']);
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'deliverable' });
  });

  it('the minute timer arms far messages with their ids (reading the due index), the release does not read it', async () => {
    const due = h.clock.now() + 2 * 3600_000 + 30_500;
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push(await h.queue.send('jobs', send(`far-${i}`, { deliverAt: due + i * 1000 })));
    expect(h.recorded.releases).toEqual([]);
    expect(h.recorded.minutes).toHaveLength(1);
    h.clock.t = h.recorded.minutes[0]!.at;
    await h.fire();
    expect(h.recorded.releases.map((w) => w.payload.ids)).toEqual(sent.map((s) => [s.messageId.slice(1)]));
    h.clock.t = due + 2000;
    recording = true;
    await h.fire();
    recording = false;
    expect(indexQueries).toEqual([]);
    expect(bodies(await receive())).toEqual(['far-0', 'far-1', 'far-2']);
  });

  it('a wake-up without ids (queued before ids were carried) still releases its second from the due index', async () => {
    await h.queue.send('jobs', send('old', { delaySeconds: 2 }));
    const { kind, minute, second } = h.recorded.releases.splice(0)[0]!.payload;
    h.clock.advance(2000);
    recording = true;
    expect(await h.timers.onRelease({ kind, minute, second })).toBe(1);
    recording = false;
    expect(indexQueries[0]).toBe('QueryCommand gsi1'); // the recorder sees index reads (the id-carrying tests above see none)
    expect(bodies(await receive())).toEqual(['old']);
  });
});

describe('check-backs armed to the second', () => {
  async function producer(checkIntervalSeconds: number, maxChecks = 5) {
    const created = await h.transactions.putProducer('shop', build.producer(checker.url, { checkIntervalSeconds, maxChecks }));
    checker.secrets = [(created as { signingSecret: string }).signingSecret];
  }
  const half = (body: string, checkAfterSeconds: number) => h.queue.send('jobs', send(body, { transaction: { producerGroup: 'shop', checkAfterSeconds } }));

  it('arms the first check at checkAfterSeconds and each next one at checkIntervalSeconds, through the delay path', async () => {
    await producer(3);
    const sent = await half('tx', 2);
    const tx = sent.transactionId!;
    expect(h.recorded.checks).toEqual([{ at: h.clock.now() + 2000, transactionIds: [tx] }]);
    h.clock.advance(1999);
    expect(await h.transactions.check(tx)).toBe('unknown'); // 1 ms early: waits it out, then checks
    expect(checker.calls).toHaveLength(1);
    expect(h.recorded.checks[1]).toEqual({ at: h.clock.now() + 3000, transactionIds: [tx] });
    expect(await h.transactions.check(tx)).toBe('skipped'); // a stale or duplicate delivery: 3 s early, no call
    expect(checker.calls).toHaveLength(1);
    h.clock.advance(3000);
    expect(await h.transactions.check(tx)).toBe('unknown');
    expect(checker.calls.map((c) => c.checkCount)).toEqual([1, 2]);
    expect(await h.transactions.get(tx)).toMatchObject({ state: 'prepared', checkCount: 2, nextCheckAt: new Date(h.clock.now() + 3000).toISOString() });
  });

  it('a check-back beyond the delay queue reach goes through its minute schedule, then the delay', async () => {
    await producer(3600);
    const sent = await half('tx', 3600);
    const at = h.clock.now() + 3_600_000;
    expect(h.recorded.checks).toEqual([]);
    expect(h.recorded.minutes.map((m) => m.payload)).toEqual([{ kind: 'minute', minute: minuteOf(at) }]);
    h.clock.t = h.recorded.minutes[0]!.at;
    await h.fire();
    expect(h.recorded.checks).toEqual([{ at, transactionIds: [sent.transactionId] }]);
  });

  it('the last check arms nothing more; the check sweep still finds a check whose timer was lost', async () => {
    await producer(1, 2);
    const tx = (await half('tx', 1)).transactionId!;
    h.recorded.checks.length = 0; // the armed check was lost
    h.clock.advance(1000);
    h.dispatched.length = 0;
    await h.transactions.sweep();
    expect(h.dispatched).toEqual([tx]);
    expect(await h.transactions.check(tx)).toBe('unknown');
    expect(h.recorded.checks).toHaveLength(1);
    h.clock.advance(1000);
    expect(await h.transactions.check(tx)).toBe('unknown'); // maxChecks 2: rolled back, nothing armed
    expect(h.recorded.checks).toHaveLength(1);
    expect(await h.transactions.get(tx)).toMatchObject({ state: 'rolled-back', resolvedBy: 'onMaxChecks' });
  });
});

