/**
 * The ready index's horizon of a group (docs/design.md, Ready index, "The horizon"):
 *
 *   pk "I#<group>", sk "H"   {h: epoch ms, ttl: epoch s}
 *
 * Invariant: no entry of the group's ready index (`g1sk` of a shard cursor `C#<group>`) written
 * since the item exists is due later than `h` — a ready-now key is due when it is written, a
 * lease-expiry key at its time; an entry moved to another index key, when it moves. Every write
 * that sets `g1sk` or `g1pk` covers its entry first
 * (ready-horizon-cover.ts: a middleware on the document client, so that no writer, present or
 * future, can leave it out): a conditional UpdateItem that raises `h` to the entry's due time plus
 * {@link HORIZON_AHEAD_MS}, not sent while this container knows `h` at least {@link COVER_SLACK_MS}
 * past the due (the longest a request of the stores' client takes, retries included) — about one
 * write a minute per container and group while its shards keep being claimed or committed.
 *
 * What it is for: a waiting receive (a long-poll look, a parking receive) reads every one of a wide
 * group's 16–64 bucket keys and its home key, 17–65 eventually consistent Queries, ½ RRU each even
 * when empty. When this container's last such read of the group, begun at S, found nothing due, and
 * `h < S − HORIZON_MARGIN_MS`, nothing can be due now: an entry written after S would be due after S
 * (≥ its write time), past `h`; one written before S − margin is one the read at S saw (due, had it
 * been due by `h`); so the look reads `h` (one consistent GetItem, 1 RRU) instead (ready-index.ts,
 * `readyAcross`'s `rest`). The margin covers clock skew between containers and the index's
 * propagation (writes reach a GSI "within 1 second" normally, AWS re:Post knowledge center,
 * "dynamodb-missing-table-items-gsi"). Entries written without a
 * cover (by a version before this one) are found by the read every {@link QUIET_READ_EVERY_MS}.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../../ports/clock.js';
import { call, conditionalWithImage } from './call.js';
import { readyHorizonKey } from './keys.js';

/** A cover raises `h` this far past the due it covers (ms). */
export const HORIZON_AHEAD_MS = 90_000;
/**
 * A cover is skipped only while `h` is known to be this far past the due (ms): the check runs once
 * per request, before the SDK's own retries, and the write it lets through must land by `h`. The
 * longest request of the stores' client: 3 attempts × (2 s to connect + 5 s to answer) and the
 * SDK's back-off between them (≤ 3 s), < 30 s (client.ts; `test/unit/ready-horizon-dues.test.ts`).
 * With {@link HORIZON_AHEAD_MS}: one cover a minute per container and group while writes keep coming.
 */
export const COVER_SLACK_MS = 30_000;
/** A look trusts a quiet read begun at S only when `h` is this much before S (ms): clock skew and the index's propagation. */
export const HORIZON_MARGIN_MS = 10_000;
/** A waiting receive reads the whole ready index at least this often (ms), whatever `h` says. */
export const QUIET_READ_EVERY_MS = 300_000;
/** The item outlives its `h` by this long (s): a group deleted or idle that long leaves nothing behind. */
export const HORIZON_TTL_SECONDS = 7 * 24 * 3600;
/** Groups whose `h` one container remembers; past this it starts again. */
const GROUPS_KEPT = 10_000;

export class ReadyHorizon {
  /** Per group: a value `h` is known to be at or past (h never moves back while its item lives). */
  private readonly known = new Map<string, number>();

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly table: string,
    private readonly clock: Clock,
  ) {}

  /**
   * Makes `h` at least `due` (and the present: a ready-now entry, due 0, is due when written) before
   * an entry due then is written. One conditional write (`h` to `due` + {@link HORIZON_AHEAD_MS})
   * unless this container knows `h` is there already with {@link COVER_SLACK_MS} to spare (the write
   * it lets through may land that much later); a failed condition answers the `h` another writer
   * left (no read).
   */
  async cover(group: string, due: number): Promise<void> {
    // What `h` must be at least: the due, and the slack a request of this client may take to land.
    const need = Math.max(due, this.clock.now()) + COVER_SLACK_MS;
    if ((this.known.get(group) ?? -Infinity) >= need) return;
    const h = need - COVER_SLACK_MS + HORIZON_AHEAD_MS;
    const result = await conditionalWithImage(this.doc, {
      TableName: this.table,
      Key: readyHorizonKey(group),
      UpdateExpression: 'SET h = :h, #ttl = :ttl',
      ConditionExpression: 'attribute_not_exists(h) OR h < :need',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':h': h, ':need': need, ':ttl': Math.ceil(h / 1000) + HORIZON_TTL_SECONDS },
    });
    this.remember(group, result.ok ? h : Number(result.old?.h ?? need));
  }

  /** `h` as it is now (consistent: a cover that returned is seen), 0 when the group has none. */
  async read(group: string): Promise<number> {
    const { Item } = await call(() => this.doc.send(new GetCommand({ TableName: this.table, Key: readyHorizonKey(group), ConsistentRead: true })));
    const h = Item?.h === undefined ? 0 : Number(Item.h);
    if (h > 0) this.remember(group, h);
    return h;
  }

  private remember(group: string, h: number): void {
    if (this.known.size >= GROUPS_KEPT && !this.known.has(group)) this.known.clear();
    this.known.set(group, Math.max(h, this.known.get(group) ?? -Infinity));
  }
}
