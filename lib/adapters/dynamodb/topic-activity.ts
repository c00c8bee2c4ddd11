/**
 * Topic activity items: when a flagged message (one someone waits for) last
 * landed on a topic. The dispatcher moves `at` forward; an HTTP long poll
 * reads it instead of every partition's cursor (docs/design.md, "The
 * dispatcher").
 *
 *   pk "A#<topic>", sk "A"   {at: epoch ms, ttl: epoch s, p<n>: epoch ms}
 *
 * `p<n>` (standard topics): when a flagged segment last landed in partition
 * n, so a receive that woke on `at` looks at the partitions that moved
 * first instead of finding them by rotation (docs/design.md, "Receive with
 * many partitions"). Each is ≤ 12 bytes (a 4-character name and a 13-digit
 * number), so at `Limits.partitionsMax` = 256 partitions the item stays
 * under 4 KB: one read unit, ½ RRU eventually consistent, as without them.
 *
 * One item per topic, written at most once per topic per dispatcher
 * invocation (twice when another invocation moved `at` past this one's time),
 * so its write rate is bounded by the invocation rate, not the message rate.
 * `ttl` lets the items of deleted or long-idle topics go.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { call, conditionalWithImage } from './call.js';
import { activityKey } from './keys.js';

export { activityKey };

/** An activity item outlives its last write by this long (a long poll treats "gone" as "never"). */
export const ACTIVITY_TTL_SECONDS = 7 * 24 * 3600;

/** What the activity item says: `at`, and per partition when it last moved (standard topics). */
export interface Activity {
  at: number;
  partitions: ReadonlyMap<number, number>;
}

/** Attempts of one touch that stamps partitions: each failed one moves `at` 1 ms past what it found. */
const STAMP_ATTEMPTS = 3;

export class TopicActivity {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Moves the topic's `at` forward to `at` (ms) and stamps `partitions` with
   * it. A write that would move `at` back (a late or repeated invocation)
   * fails its condition; without partitions that changes nothing (false).
   * With partitions the stamps must land, and a waiter that already looked
   * past the other invocation's `at` must wake again for them: the write is
   * repeated with `at` 1 ms past the `at` it found (the failed condition's
   * old image, no read), at most {@link STAMP_ATTEMPTS} times. One write
   * unit per KB of the item (≤ 4 at 256 partitions). `insist` false: stamps
   * that may be lost (one attempt, as without partitions); a function: asked
   * once, after the first lost race only (so what it costs is paid only then).
   */
  async touch(topic: string, at: number, partitions: readonly number[] = [], insist: boolean | (() => Promise<boolean>) = partitions.length > 0): Promise<boolean> {
    const names: Record<string, string> = { '#at': 'at', '#ttl': 'ttl' };
    const sets = ['#at = :at', '#ttl = :ttl'];
    [...new Set(partitions)].forEach((p, i) => {
      names[`#${i}`] = `p${p}`;
      sets.push(`#${i} = :at`);
    });
    let when = at;
    for (let attempt = 0; attempt < STAMP_ATTEMPTS; attempt++) {
      const result = await conditionalWithImage(this.doc, {
        TableName: this.table,
        Key: activityKey(topic),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_not_exists(#at) OR #at < :at',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':at': when, ':ttl': Math.ceil(when / 1000) + ACTIVITY_TTL_SECONDS },
      });
      if (result.ok) return true;
      if (typeof insist === 'function') insist = await insist();
      if (!insist) return false;
      when = Math.max(when, Number(result.old?.at ?? 0)) + 1;
    }
    return false;
  }

  /** When a flagged message last landed on `topic` (ms), 0 if never; eventually consistent (½ read unit). */
  async lastActivity(topic: string): Promise<number> {
    return (await this.activity(topic)).at;
  }

  /**
   * `at` (0 if never) and the partitions' stamps; eventually consistent, the whole item (≤ 4 KB at
   * 256 partitions: ½ read unit, the same as `at` alone — DynamoDB bills a read by the item's size).
   */
  async activity(topic: string): Promise<Activity> {
    const { Item } = await call(() => this.doc.send(new GetCommand({ TableName: this.table, Key: activityKey(topic) })));
    const partitions = new Map<number, number>();
    for (const [name, value] of Object.entries(Item ?? {})) {
      if (/^p\d+$/.test(name)) partitions.set(Number(name.slice(1)), Number(value));
    }
    return { at: Item?.at === undefined ? 0 : Number(Item.at), partitions };
  }
}
