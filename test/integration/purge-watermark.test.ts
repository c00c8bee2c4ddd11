/**
 * Found by an audit (2026-12-04); before its fix, a purge takes its time `pa` first and reads the partitions' heads after it
 * (`pw`). A send that becomes deliverable after `pa` but lands before the head read is not purged
 * (receive delivers it: `isPurged` is false), yet sits below `pw`: a seek `earliest` (or to a time
 * before it) and an `earliest` subscription start at `pw` and never deliver it.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Seeker } from '../../lib/services/seeker.js';
import * as build from '../helpers/builders.js';
import { harness, newHarness, send, type Harness } from '../helpers/stores.js';
import { drainBodies } from '../helpers/drain.js';

let h: Harness;
const receive = (g: string, max = 100) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });
const drain = (g: string) => drainBodies(h, g);

/** A purge whose partition head reads wait until `during` was sent, 1 ms after the purge took its time. */
async function purgeWithSendDuring() {
  let sent: Promise<unknown> | undefined;
  const raw = h.doc.send.bind(h.doc) as (command: unknown) => Promise<unknown>;
  const wrapped = Object.create(h.doc) as DynamoDBDocumentClient;
  wrapped.send = (async (command: unknown) => {
    const input = command instanceof QueryCommand ? command.input : undefined;
    const pk = input?.ExpressionAttributeValues?.[':pk'];
    if (input?.ScanIndexForward === false && typeof pk === 'string' && pk.includes('orders')) {
      sent ??= (async () => {
        h.clock.advance(1);
        await h.queue.send('orders', send('during'));
      })();
      await sent;
    }
    return raw(command);
  }) as DynamoDBDocumentClient['send'];
  const purger = harness(wrapped, h.table, { clock: h.clock });
  const answer = await purger.admin.purgeTopic('orders');
  h.clock.advance(1);
  expect(sent).toBeDefined();
  return answer;
}

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', build.topic());
  await h.admin.putGroup('g', build.group('orders', { visibilityTimeoutSeconds: 30 }));
  await h.admin.putGroup('plain', build.group('orders', { visibilityTimeoutSeconds: 30 }));
  h.clock.advance(1);
  await h.queue.send('orders', send('old'));
  await purgeWithSendDuring();
});

// A message is purged or not by its own deliverableAt against one pa, "the same for every group and
// every read" (docs/design.md, Purge): what a plain receive delivers, a replay delivers too.
describe('a message sent during a purge: every read agrees whether it was purged', () => {
  it('seek earliest replays what a plain receive delivers', async () => {
    const delivered = await drain('plain');
    await new Seeker(h.stores, h.clock).seek('g', 'earliest', undefined);
    expect(await drain('g')).toEqual(delivered);
  });
  it('an earliest subscription made after the purge gets what a plain receive delivers', async () => {
    const delivered = await drain('plain');
    await h.admin.putGroup('replay', build.group([{ topic: 'orders', tags: undefined, startFrom: 'earliest' }]));
    expect(await drain('replay')).toEqual(delivered);
  });
});
