/**
 * Topic activity items: when a flagged message (one someone waits for) last
 * landed on a topic. The dispatcher moves `at` forward; an HTTP long poll
 * reads it instead of every partition's cursor (docs/design.md, "The
 * dispatcher").
 *
 *   pk "A#<topic>", sk "A"   {at: epoch ms, ttl: epoch s}
 *
 * One item per topic, written at most once per topic per dispatcher
 * invocation, so its write rate is bounded by the invocation rate, not the
 * message rate. `ttl` lets the items of deleted or long-idle topics go.
 */
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { call, conditional } from './call.js';
import { activityKey } from './keys.js';

export { activityKey };

/** An activity item outlives its last write by this long (a long poll treats "gone" as "never"). */
export const ACTIVITY_TTL_SECONDS = 7 * 24 * 3600;

export class TopicActivity {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Moves the topic's `at` forward to `at` (ms). A write that would move it
   * back (a late or repeated invocation) fails its condition and changes
   * nothing: returns false then. One write unit (the item is tiny).
   */
  touch(topic: string, at: number): Promise<boolean> {
    return conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: activityKey(topic),
          UpdateExpression: 'SET #at = :at, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(#at) OR #at < :at',
          ExpressionAttributeNames: { '#at': 'at', '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':at': at, ':ttl': Math.ceil(at / 1000) + ACTIVITY_TTL_SECONDS },
        }),
      ),
    );
  }

  /** When a flagged message last landed on `topic` (ms), 0 if never; eventually consistent (½ read unit). */
  async lastActivity(topic: string): Promise<number> {
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: activityKey(topic), ProjectionExpression: '#at', ExpressionAttributeNames: { '#at': 'at' } })),
    );
    return Item?.at === undefined ? 0 : Number(Item.at);
  }
}
