/**
 * The timer sweep works from a stored low-water mark (issue 14 item 4, design §6):
 * a wake-up lost for hours is still released; the mark moves only past what was
 * handled; pages are bounded. DynamoDB Local, injected clock.
 */
import { describe, expect, it } from 'vitest';
import { TimerService, SWEEP_SETTLE_MS } from '../../lib/services/timer-service.js';
import { group, topic } from '../helpers/builders.js';
import { FakeClock, harness, newHarness, send, testTable } from '../helpers/stores.js';

const HOUR = 3_600_000;
/** A clock 10 s into a minute, so a test's messages share one minute bucket. */
const minuteClock = () => new FakeClock(Math.floor(Date.now() / 60_000) * 60_000 + 10_000);

describe('timer sweep from a low-water mark', () => {
  it('releases messages whose delay-queue message and minute schedule were both lost, hours later', async () => {
    const h = await newHarness();
    await h.admin.putTopic('jobs', topic());
    await h.admin.putGroup('g', group('jobs', { visibilityTimeoutSeconds: 30 }));
    expect(await h.timers.sweep()).toBe(0);
    expect(await h.stores.deferred.sweepMark()).toBe(h.clock.now() - SWEEP_SETTLE_MS);
    await h.queue.send('jobs', send('near', { delaySeconds: 5 })); // an SQS delay message
    await h.queue.send('jobs', send('far', { delaySeconds: 2 * 3600 })); // a minute schedule
    expect(h.recorded.releases).toHaveLength(1);
    expect(h.recorded.minutes).toHaveLength(1);
    h.recorded.releases.length = 0; // the delay-queue message went to its DLQ
    h.recorded.minutes.length = 0; // the schedule was dropped
    h.clock.advance(5 * HOUR);
    expect(await h.timers.sweep()).toBe(2);
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body).sort()).toEqual(['far', 'near']);
    expect(await h.stores.deferred.sweepMark()).toBe(h.clock.now() - SWEEP_SETTLE_MS);
  });

  it('reads bounded pages and moves the mark only past what it finished', async () => {
    const h = await newHarness({ clock: minuteClock() });
    const timers = new TimerService(h.stores.deferred, h.recorded, h.recorded, h.clock, (ids) => h.releaser.releaseDue(ids), undefined, undefined, {
      pageSize: 2,
      pages: 2,
      minutes: 1440,
      budgetMs: Number.MAX_SAFE_INTEGER,
    });
    await h.admin.putTopic('jobs', topic());
    await timers.sweep();
    const start = await h.stores.deferred.sweepMark();
    for (let i = 0; i < 6; i++) await h.queue.send('jobs', send(`m${i}`, { delaySeconds: 10 }));
    h.clock.advance(30_000);
    expect(await timers.sweep()).toBe(4); // two pages of two
    expect(await h.stores.deferred.sweepMark()).toBe(start);
    expect(await timers.sweep()).toBe(2);
    expect(await h.stores.deferred.sweepMark()).toBe(h.clock.now() - SWEEP_SETTLE_MS);
  });

  it('keeps the mark before a minute bucket that failed, releases the later ones, and catches up', async () => {
    const { client, doc, table } = await testTable();
    const h = harness(doc, table, { clock: minuteClock() });
    const logged: Array<Record<string, unknown>> = [];
    const timers = new TimerService(h.stores.deferred, h.recorded, h.recorded, h.clock, (ids) => h.releaser.releaseDue(ids), undefined, (_m, details) =>
      logged.push(details),
    );
    await h.admin.putTopic('jobs', topic());
    await h.admin.putGroup('g', group('jobs', { visibilityTimeoutSeconds: 30 }));
    await timers.sweep();
    const start = await h.stores.deferred.sweepMark();
    const failing = `T#${Math.floor((h.clock.now() + 10_000) / 60_000)}`;
    await h.queue.send('jobs', send('first minute', { delaySeconds: 10 }));
    await h.queue.send('jobs', send('next minute', { delaySeconds: 70 }));
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'QueryCommand' && JSON.stringify(args.input).includes(`"${failing}"`)) {
          throw Object.assign(new Error('injected'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
        }
        return next(args);
      },
      { step: 'initialize', name: 'failBucket' },
    );
    h.clock.advance(2 * 60_000);
    expect(await timers.sweep()).toBe(1);
    expect(logged).toHaveLength(1);
    expect(await h.stores.deferred.sweepMark()).toBe(start);
    client.middlewareStack.remove('failBucket');
    expect(await timers.sweep()).toBe(1);
    expect(await h.stores.deferred.sweepMark()).toBe(h.clock.now() - SWEEP_SETTLE_MS);
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body).sort()).toEqual(['first minute', 'next minute']);
  });
});
