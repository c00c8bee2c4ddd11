/**
 * The stream log tells the append meter each append's outcome (lib/services/append-meter.ts):
 * races lost by a retried append and by a one-try append, on DynamoDB Local — the figures the
 * HTTP edge writes as the per-topic contention metrics on AWS.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Contention } from '../../lib/adapters/dynamodb/append-contention.js';
import { LostRaceError, StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { APPEND_METRICS_WINDOW_MS, AppendMeter } from '../../lib/services/append-meter.js';
import { FakeStopwatch } from '../helpers/fake-stopwatch.js';
import { record } from '../helpers/records.js';
import { FakeClock, testTable } from '../helpers/stores.js';

describe('append outcomes reach the meter', () => {
  const clock = new FakeClock();
  let meter: AppendMeter;
  let counted: StreamLog;
  let rival: StreamLog;

  beforeAll(async () => {
    const { doc, table } = await testTable('append-meter');
    meter = new AppendMeter(clock);
    counted = new StreamLog(doc, table, clock, undefined, { contention: new Contention(new FakeStopwatch(), () => 0), observe: meter.record });
    rival = new StreamLog(doc, table, clock);
  });

  const append = (log: StreamLog, stream: string, id: string, once = false) =>
    log.append(stream, () => ({ records: [record(clock, id)] }), once ? { once } : {});

  it('counts landed appends, the races they lost, and a one-try append that lost', async () => {
    await append(counted, 't:hot/k:a', 'c1'); // counted's hint: the next number
    await append(rival, 't:hot/k:a', 'r1');
    await append(rival, 't:hot/k:a', 'r2');
    // The hinted put loses to r1, the learned one to r2: two races, then it lands.
    await append(counted, 't:hot/k:a', 'c2');
    await append(counted, 't:calm/p:0', 'p1'); // counted's hint on the partition
    await append(rival, 't:calm/p:0', 'r3');
    await expect(append(counted, 't:calm/p:0', 'p2', true)).rejects.toBeInstanceOf(LostRaceError);
    counted.reportThrottled(['t:calm/p:1']); // the sender's 429 after its one-try appends lost everywhere
    expect(meter.take()).toBeUndefined(); // the window lasts
    clock.advance(APPEND_METRICS_WINDOW_MS);
    expect(meter.take()).toEqual([
      { topic: 'hot', appends: 2, lostRaces: 2, throttled: 0 },
      { topic: 'calm', appends: 1, lostRaces: 1, throttled: 1 },
    ]);
  });

  it('lands an append whatever the observer does (its figures are statistics)', async () => {
    const { doc, table } = await testTable('append-meter-throwing');
    const log = new StreamLog(doc, table, clock, undefined, {
      observe: () => {
        throw new Error('observer broken');
      },
    });
    expect((await append(log, 't:any/p:0', 'x1')).seq).toBe(1);
    expect((await log.read('t:any/p:0', 0, 10)).map((s) => s.records[0]?.messageId)).toEqual(['x1']);
  });
});
