/** a redriven message keeps the properties its original had, also `sluice-dead-letter-*` ones (found by an audit, 2026-12-04). */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;
beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
});
const receive = (name = 'billing', max = 10) => h.queue.receive(name, { maxMessages: max, waitSeconds: 0 });

describe('redrive properties', () => {
  it('redrive of a DLQ copy dead-lettered by a group reading the DLQ keeps its properties', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    const sent = await h.queue.send('orders', send('poison', { properties: { p: '1' } }));
    await receive('billing');
    h.clock.advance(31_000);
    expect(await receive('billing')).toEqual([]);
    const link = (await h.queue.getMessage('orders', sent.messageId)).groups[0]!.deadLetter!;
    const copy = await h.queue.getMessage(link.topic, link.messageId);
    await h.admin.putGroup('triage', group([{ topic: 'billing-dlq', tags: undefined, startFrom: 'earliest' } as never], { maxDeliveries: 1 }));
    const [c] = await receive('triage');
    expect(c?.messageId).toBe(link.messageId);
    expect(c?.properties).toEqual(copy.properties);
    h.clock.advance(31_000);
    expect(await receive('triage')).toEqual([]);
    expect((await h.redriver.redrive('triage', undefined)).redriven).toBe(1);
    const [back] = await receive('triage');
    expect(back?.messageId).toBe(link.messageId);
    expect(back?.properties).toEqual(copy.properties);
  });

});
