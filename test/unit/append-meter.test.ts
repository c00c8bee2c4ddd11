/**
 * Append contention per topic (lib/services/append-meter.ts) and its EMF documents
 * (functions/commons/append-metrics.ts): counted per container, taken at most once a minute and
 * only for topics that lost a race or answered 429.
 */
import { describe, expect, it } from 'vitest';
import { emfDocuments } from '../helpers/emf.js';
import { TOPIC_METRICS } from '../../lib/adapters/aws/names.js';
import { APPEND_METRICS_WINDOW_MS, AppendMeter, TOPICS_COUNTED, topicOfStream } from '../../lib/services/append-meter.js';
import { emitAppendContention } from '../../functions/commons/append-metrics.js';
import { FakeClock } from '../helpers/stores.js';

const landed = (lost = 0) => ({ landed: true, lost, throttled: false });

describe('topicOfStream', () => {
  it('names a topic by its streams; a time-order group by its own; not a notice or redrive stream', () => {
    expect(topicOfStream('t:orders/p:3')).toBe('orders');
    expect(topicOfStream('t:ledger/k:a/b')).toBe('ledger');
    expect(topicOfStream('t:ledger/k:n:1')).toBe('ledger');
    expect(topicOfStream('t:ledger/n:17')).toBeUndefined();
    expect(topicOfStream('o:payments/k:x')).toBe('order-group:payments');
    expect(topicOfStream('r:billing/p:0')).toBeUndefined();
  });
});

describe('AppendMeter', () => {
  it('takes nothing while the window lasts, then the contended topics once, then starts again', () => {
    const clock = new FakeClock();
    const meter = new AppendMeter(clock);
    meter.record(['t:hot/k:a'], landed(2));
    meter.record(['t:hot/k:a'], landed());
    meter.record(['t:hot/k:a'], { landed: false, lost: 12, throttled: true });
    meter.record(['t:calm/p:0'], landed());
    expect(meter.take()).toBeUndefined();
    clock.advance(APPEND_METRICS_WINDOW_MS);
    expect(meter.take()).toEqual([{ topic: 'hot', appends: 2, lostRaces: 14, throttled: 1 }]);
    expect(meter.take()).toBeUndefined(); // a new window
    clock.advance(APPEND_METRICS_WINDOW_MS);
    expect(meter.take()).toBeUndefined(); // counted from zero: nothing contended since
  });

  it('takes nothing from a window without contention (an idle or calm topic writes no metric)', () => {
    const clock = new FakeClock();
    const meter = new AppendMeter(clock);
    for (let i = 0; i < 100; i++) meter.record(['t:calm/p:0', 't:calm/n:0'], landed());
    clock.advance(APPEND_METRICS_WINDOW_MS);
    expect(meter.take()).toBeUndefined();
  });

  it('counts a multi-stream append once per topic, and a one-try append’s lost race', () => {
    const clock = new FakeClock();
    const meter = new AppendMeter(clock);
    meter.record(['t:a/k:x', 't:a/n:1', 't:b/p:0'], landed(1));
    meter.record(['t:a/p:2'], { landed: false, lost: 1, throttled: false });
    clock.advance(APPEND_METRICS_WINDOW_MS);
    expect(meter.take()).toEqual([
      { topic: 'a', appends: 1, lostRaces: 2, throttled: 0 },
      { topic: 'b', appends: 1, lostRaces: 1, throttled: 0 },
    ]);
  });

  it('counts at most TOPICS_COUNTED topics a window', () => {
    const clock = new FakeClock();
    const meter = new AppendMeter(clock);
    for (let i = 0; i <= TOPICS_COUNTED; i++) meter.record([`t:t${i}/p:0`], landed(1));
    clock.advance(APPEND_METRICS_WINDOW_MS);
    expect(meter.take()).toHaveLength(TOPICS_COUNTED);
  });
});

describe('emitAppendContention', () => {
  it('writes one EMF document per topic with the topic as its only dimension', () => {
    const docs = emfDocuments(() => {
      emitAppendContention([
        { topic: 'orders', appends: 900, lostRaces: 1200, throttled: 3 },
        { topic: 'order-group:payments', appends: 10, lostRaces: 1, throttled: 0 },
      ]);
    });
    expect(docs).toHaveLength(2);
    const [directive] = docs[0]!._aws.CloudWatchMetrics;
    expect(directive).toMatchObject({
      Namespace: TOPIC_METRICS.namespace,
      Dimensions: [['Topic']],
      Metrics: expect.arrayContaining([
        { Name: 'Appends', Unit: 'Count' },
        { Name: 'AppendLostRaces', Unit: 'Count' },
        { Name: 'AppendsThrottled', Unit: 'Count' },
      ]),
    });
    expect(docs[0]).toMatchObject({ Topic: 'orders', Appends: 900, AppendLostRaces: 1200, AppendsThrottled: 3 });
    expect(docs[1]).toMatchObject({ Topic: 'order-group:payments', Appends: 10, AppendLostRaces: 1, AppendsThrottled: 0 });
    expect(docs[0]).not.toHaveProperty('service');
  });
});
