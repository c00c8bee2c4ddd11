/** Message records as StreamLog tests append them. */
import type { MessageRecord } from '../../lib/domain/model.js';
import type { Clock } from '../../lib/ports/clock.js';

/** A record of topic `t` sent now by `clock`, body = id, kept an hour. */
export const record = (clock: Clock, id: string): MessageRecord => ({
  messageId: id,
  topic: 't',
  body: id,
  encoding: 'utf8',
  tag: undefined,
  keys: [],
  properties: {},
  shardKey: undefined,
  sentAt: clock.now(),
  deliverableAt: clock.now(),
  expiresAt: clock.now() + 3_600_000,
  generation: 1,
});
