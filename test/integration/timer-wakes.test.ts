/**
 * Release wake-ups carry the ids due in their second, and release reads them
 * by key, strongly consistent — never through the due index (issue 14 item 5);
 * check-backs are armed to the second through the same timer path (item 6).
 * Local path: DynamoDB Local, recording timer adapters, a fake clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { minuteOf } from '../../lib/adapters/dynamodb/keys.js';
import { ThrottledError } from '../../lib/domain/errors.js';
import { TimerService } from '../../lib/services/timer-service.js';
import * as build from '../helpers/builders.js';
import { startChecker, type TestChecker } from '../helpers/checker.js';
import { recordCalls, type CallRecorder } from '../helpers/call-recorder.js';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';

let h: Harness;
let checker: TestChecker;
let calls: CallRecorder;

const receive = () => h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 });
const bodies = (ms: Array<{ body: string }>) => ms.map((m) => m.body).sort();

beforeEach(async () => {
  const { client, doc, table } = await testTable();
  calls = recordCalls(client);
  h = harness(doc, table, { checkTimeoutMs: 1000 });
  checker = await startChecker(() => 'unknown');
  // One partition: the release rounds are counted as the segments they append.
  await h.admin.putTopic('jobs', build.topic({ partitions: 1 }));
  await h.admin.putGroup('g', build.group('jobs', { visibilityTimeoutSeconds: 30 }));
});
afterEach(async () => {
  calls.recording = false;
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
    calls.recording = true;
    await h.fire();
    calls.recording = false;
    expect(calls.indexQueries).toEqual([]);
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
    calls.recording = true;
    await h.fire(); // 'a' now; 'b' 800 ms later: the release waits it out (the injected wait moves the clock)
    calls.recording = false;
    expect(calls.indexQueries).toEqual([]);
    expect(bodies(await receive())).toEqual(['a', 'b']);
    h.clock.t = (second + 1) * 1000;
    await h.fire();
    expect(bodies(await receive())).toEqual(['c']);
  });

  it('concurrent wake-ups of one second join one flight: each message released once, no write lost a race', async () => {
    const due = h.clock.now() + 1000;
    const sent = [];
    for (let i = 0; i < 6; i++) sent.push(await h.queue.send('jobs', send(`m-${i}`, { deliverAt: due })));
    const wakes = h.recorded.releases.splice(0).map((w) => w.payload);
    expect(wakes.map((w) => w.ids)).toEqual(sent.map((s) => [s.messageId.slice(1)])); // one wake-up per send
    h.clock.t = due;
    calls.recording = true;
    // All fire together (as SQS delivers them at once), one of them twice; one more of the same second comes later.
    const first = Promise.all([...wakes.slice(0, 5), wakes[0]!].map((w) => h.timers.onRelease(w)));
    await new Promise((resolve) => setTimeout(resolve, 50)); // later: it joins the running flight, or starts the next one
    const late = h.timers.onRelease(wakes[5]!);
    const counts = [...(await first), await late];
    calls.recording = false;
    expect(counts.reduce((a, b) => a + b, 0)).toBe(6); // the flight counts them all, joiners 0
    expect(calls.transactions.failed).toBe(0);
    expect(calls.failedConditions).toBe(0); // no claim, segment put or mark lost a race
    expect(calls.segments).toBe(2); // the wake-ups delivered together in one round, the one that came later in the next
    expect(bodies(await receive())).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4', 'm-5']);
    for (const s of sent) expect(await h.queue.getMessage('jobs', s.messageId)).toMatchObject({ state: 'deliverable' });
    // The flight has ended: a wake-up delivered again releases nothing and appends nothing.
    calls.recording = true;
    expect(await h.timers.onRelease(wakes[0]!)).toBe(0);
    calls.recording = false;
    expect(calls.segments).toBe(2);
  });

  it('a flight that fails rejects every wake-up that joined it (SQS retries their records), and the next one releases them', async () => {
    const due = h.clock.now() + 1000;
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push(await h.queue.send('jobs', send(`f-${i}`, { deliverAt: due })));
    const wakes = h.recorded.releases.splice(0).map((w) => w.payload);
    h.clock.t = due;
    const failing = new TimerService(h.stores.deferred, h.recorded, h.recorded, h.clock, async () => {
      throw new ThrottledError('busy');
    });
    const outcomes = await Promise.allSettled(wakes.map((w) => failing.onRelease(w)));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(bodies(await receive())).toEqual([]);
    await Promise.all(wakes.map((w) => h.timers.onRelease(w))); // the records again, as SQS redelivers them
    expect(bodies(await receive())).toEqual(['f-0', 'f-1', 'f-2']);
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
    // Three seconds of one minute (hh:mm:30.5–32.5), two hours ahead: one minute timer. (From an unaligned
    // clock, due + 2 s crossed into the next minute whenever the clock stood at :27.5–:29.5.)
    const due = Math.floor((h.clock.now() + 2 * 3600_000) / 60_000) * 60_000 + 30_500;
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push(await h.queue.send('jobs', send(`far-${i}`, { deliverAt: due + i * 1000 })));
    expect(h.recorded.releases).toEqual([]);
    expect(h.recorded.minutes).toHaveLength(1);
    h.clock.t = h.recorded.minutes[0]!.at;
    await h.fire();
    expect(h.recorded.releases.map((w) => w.payload.ids)).toEqual(sent.map((s) => [s.messageId.slice(1)]));
    h.clock.t = due + 2000;
    calls.recording = true;
    await h.fire();
    calls.recording = false;
    expect(calls.indexQueries).toEqual([]);
    expect(bodies(await receive())).toEqual(['far-0', 'far-1', 'far-2']);
  });

  it('a wake-up without ids (queued before ids were carried) still releases its second from the due index', async () => {
    await h.queue.send('jobs', send('old', { delaySeconds: 2 }));
    const { kind, minute, second } = h.recorded.releases.splice(0)[0]!.payload;
    h.clock.advance(2000);
    calls.recording = true;
    expect(await h.timers.onRelease({ kind, minute, second })).toBe(1);
    calls.recording = false;
    expect(calls.indexQueries[0]).toBe('QueryCommand gsi1'); // the recorder sees index reads (the id-carrying tests above see none)
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

