/** A message as the SDK hands it to a handler, for tests of the client against fake servers. */
import type { Delivered } from '../../lib/client/index.js';

export function deliveredMessage(fields: Pick<Delivered, 'messageId' | 'body'> & Partial<Delivered>): Delivered {
  return {
    receiptHandle: `h:${fields.body}`,
    topic: 't',
    encoding: 'utf8',
    tag: null,
    keys: [],
    properties: {},
    shardKey: null,
    sequence: null,
    sentAt: '2026-01-01T00:00:00.000Z',
    deliverableAt: '2026-01-01T00:00:00.000Z',
    deliveryCount: 1,
    ...fields,
  };
}
