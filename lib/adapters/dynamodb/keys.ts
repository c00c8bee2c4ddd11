/**
 * Every key of the one Sluice table, in one place (docs/design.md, "One
 * table"). Each item kind's attributes are documented in the file that owns
 * the item (the right-hand column).
 *
 *   kind               pk                       sk                              owner
 *   topic              TOPIC                    <name>                          catalog.ts
 *   consumer group     GROUP                    <name>                          catalog.ts
 *   producer group     PRODUCER                 <name>                          producers.ts
 *   stream sentinel    S#<stream>               #                               stream-log.ts
 *   stream segment     S#<stream>               <16-digit first seq>            stream-log.ts, records.ts
 *   topic activity     A#<topic>                A                               topic-activity.ts
 *   cursor             C#<group>                <stream>                        cursor-item.ts
 *   pending outputs    O#<group>#<stream>       <seq>                           pending-outputs.ts
 *   history chunk      H#<group>#<stream>       <13-digit cursor ca>#<16-digit first seq>      history.ts
 *   history straggler  H#<group>#<stream>       <13-digit cursor ca>#s<16-digit seq>           history.ts
 *   dedup marker       U#<topic>#<dedupId>      U                               markers.ts
 *   key index entry    K#<topic>#<key>          <13-digit ms>#<messageId>       markers.ts
 *   dead-letter link   D#<topic>#<messageId>    <group>                         markers.ts
 *   dead-letter count  L#<group>#<0..7>         <13-digit group createdAt>      dead-letter-counts.ts
 *   deferred message   X#<ulid>                 X                               deferred.ts
 *   check record       X#<ulid>                 C#<6-digit n>                   deferred.ts
 *   wake marker        WAKE                     s<12-digit second> | m<12-digit minute>   deferred.ts
 *   message-id key     CONFIG                   ids                             message-id-keys.ts
 *
 * The sparse index `gsi1` (`g1pk`/`g1sk`, KEYS_ONLY) has four kinds of partition:
 *
 *   ready FIFO shards  R#<group>                #<8 hex> (ready now) | <13-digit ms>     ready-index.ts
 *     of wide topics   R#<group>#<0..63>        (the same)                      ready-index.ts
 *   scheduled, by due  T#<due minute>[#<1..7>]  <13-digit due ms>#<ulid>        deferred.ts
 *   half messages, by next check  K#<0..3>      <13-digit check ms>#<ulid>      deferred.ts
 *   dead letters a group may redrive  Q#<group>  <13-digit dead-lettered ms>     redrives.ts
 *                      (on dead-letter link items until they are redriven)
 *
 * `K#` starts both key-index item keys (table `pk`) and check-back index
 * partitions (`g1pk`): two key spaces that never meet, so the shared letter is
 * harmless; the names below keep them apart in the code. Stored keys are
 * never renamed: items written by earlier versions must still be found.
 */
import { fnv1a32, zeroPad } from '../../domain/key-encoding.js';
import { padSeq } from '../../domain/streams.js';

// ── padding (zeroPad and FNV-1a: lib/domain/key-encoding.ts) ───────────

/** Width of a time in keys: epoch milliseconds have 13 digits until the year 2286. */
export const MS_WIDTH = 13;
/** A time (ms since the epoch) as a fixed-width sort key part. */
export const padMs = (ms: number): string => zeroPad(Math.floor(ms), MS_WIDTH);
/** The end of every `<13-digit ms>#…` sort key up to and including `ms` (`~` sorts after every id). */
const upTo = (ms: number): string => `${padMs(ms)}#~`;

// ── catalog ────────────────────────────────────────────────────────────

export const TOPIC_PK = 'TOPIC';
export const GROUP_PK = 'GROUP';
export const PRODUCER_PK = 'PRODUCER';

// ── topic activity (topic-activity.ts) ─────────────────────────────────

/** The activity item of a topic: when a flagged message last landed on it. */
export const activityKey = (topic: string): { pk: string; sk: string } => ({ pk: `A#${topic}`, sk: 'A' });

// ── streams ────────────────────────────────────────────────────────────

export const streamPk = (stream: string): string => `S#${stream}`;
/** The stream named by a segment's `pk`. */
export const streamOfPk = (pk: string): string => pk.slice(2);
/** The sentinel item of a stream: sorts before every segment, holds the epoch base. */
export const SENTINEL_SK = '#';
/** A segment's sort key: its first sequence number, 16 digits. */
export const segmentSk = (seq: number): string => padSeq(seq);

// ── cursors and their side items ───────────────────────────────────────

export const cursorPk = (group: string): string => `C#${group}`;
/** The group named by a cursor's `pk`. */
export const groupOfCursorPk = (pk: string): string => pk.slice(2);
export const pendingOutputsKey = (group: string, stream: string, seq: number) => ({ pk: `O#${group}#${stream}`, sk: String(seq) });

/**
 * A cursor's completion history (history.ts). The sort key starts with the
 * cursor's creation time, so a group created again under the same name (new
 * cursors) never reads or collides with the old group's chunks, which stay
 * until their TTL. Chunks sort by their first sequence number; stragglers
 * (`s`) sort after every chunk of the same cursor.
 */
export const historyPk = (group: string, stream: string): string => `H#${group}#${stream}`;
export const historyChunkSk = (createdAt: number, first: number): string => `${padMs(createdAt)}#${padSeq(first)}`;
export const historyStragglerSk = (createdAt: number, seq: number): string => `${padMs(createdAt)}#s${padSeq(seq)}`;
/** A straggler run (a whole range's completions, one entry of `dn`: cursor-item.ts `runKey`): its first number and seek epoch. */
export const historyRunStragglerSk = (createdAt: number, start: number, epoch: number): string => `${padMs(createdAt)}#r${padSeq(start)}.${epoch}`;
/** The first sequence number of the straggler run whose sort key is `sk` (historyRunStragglerSk). */
export const historyRunStragglerStart = (sk: string): number => Number(sk.slice(sk.indexOf('#r') + 2).split('.')[0]);
/** The bounds of the straggler runs whose first number is in [from, to], any seek epoch. */
export const historyRunStragglerBounds = (createdAt: number, from: number, to: number): { lo: string; hi: string } => ({
  lo: `${padMs(createdAt)}#r${padSeq(Math.max(0, from))}`,
  hi: `${padMs(createdAt)}#r${padSeq(to)}.~`,
});

// ── ready index (gsi1) ─────────────────────────────────────────────────

/** The home ready-index partition of a group: every FIFO shard cursor but those of wide topics (and of earlier versions). */
export const readyIndexPk = (group: string): string => `R#${group}`;
/**
 * The ready index of a group's wide FIFO topics' shard cursors (more than 4 notice streams) is
 * spread over several partition keys (docs/design.md, Ready index, "How many buckets"): each takes
 * ≤ 1,000 index writes a second on AWS, and a receive of a group that asks for a wide topic reads
 * every one of them when the first ones offer too few shards (a short receive of more than 16: 14 of
 * them, in rotation), so that an expired lease or a released message is found by the next receive
 * (beyond 16: the next long-poll look, or one of the next 5 short receives). 16 for up to 64 notice
 * streams; one per 4 notice streams above that, up to 64 (a 256-stream topic): an unbatched message
 * on an idle shard makes 2–4 index writes, so 16 keys take 4,000–8,000 messages a second and 64 take
 * 16,000–32,000.
 */
export const READY_BUCKETS_MIN = 16;
export const READY_BUCKETS_MAX = 64;
/** How many ready-index buckets a wide FIFO topic of `noticeStreams` notice streams spreads its shards over. */
export const readyBucketCount = (noticeStreams: number): number =>
  Math.min(READY_BUCKETS_MAX, Math.max(READY_BUCKETS_MIN, Math.ceil(noticeStreams / 4)));
/**
 * The ready-index partition of a wide FIFO topic's shard cursor: bucket `fnv1a(stream) % buckets` of
 * its group, `R#<group>#<b>`. Group names never contain `#` (NAME_PATTERN), so no bucket key is
 * another group's home key, nor the bucket of another group; the cursor stores it in `rk`
 * (cursor-item.ts).
 */
export const readyBucketPk = (group: string, stream: string, buckets: number): string => `R#${group}#${fnv1a32(stream) % buckets}`;
/**
 * The ready index's horizon of a group (ready-horizon.ts): one small item, `h` a time no entry of the
 * group's ready index written since it was set is due after. Its own partition key: nothing that
 * reads a group's cursors (`C#<group>`) meets it.
 */
export const readyHorizonKey = (group: string): { pk: string; sk: string } => ({ pk: `I#${group}`, sk: 'H' });
/** The first `buckets` ready-index buckets of a group (what a receive asking for wide FIFO topics reads besides the home key). */
export const readyBucketPks = (group: string, buckets: number): string[] => Array.from({ length: buckets }, (_, b) => `R#${group}#${b}`);
/** Ready-index sort keys of shards with work now start with this; it sorts before every time. */
export const READY_NOW_PREFIX = '#';
/** The "ready now" key at a point of the 32-bit hash space (where a spread read starts). */
export const readyNowKeyAt = (point: number): string => `${READY_NOW_PREFIX}${zeroPad((point >>> 0).toString(16), 8)}`;
/** A shard's own "ready now" key: it never changes while the shard stays ready. */
export const readyNowKey = (stream: string): string => readyNowKeyAt(fnv1a32(stream));
/** The ready-index key of a shard that waits until `at` (ms). */
export const readyAtKey = (at: number): string => padMs(Math.max(0, at));
/** When a ready-index key says the shard has work (0: now). */
export const readyAtOfKey = (key: string): number => (key.startsWith(READY_NOW_PREFIX) ? 0 : Number(key));

// ── dedup markers and the key index ────────────────────────────────────

export const dedupKey = (topic: string, dedupId: string) => ({ pk: `U#${topic}#${dedupId}`, sk: 'U' });
export const keyIndexPk = (topic: string, key: string): string => `K#${topic}#${key}`;
export const keyIndexSk = (deliverableAt: number, messageId: string): string => `${padMs(deliverableAt)}#${messageId}`;
/** A message's dead-letter copies, one item per group that dead-lettered it: found from the original's id. */
export const deadLetterLinkPk = (topic: string, messageId: string): string => `D#${topic}#${messageId}`;
/** One of a group's dead-letter counters (dead-letter-counts.ts): the group's creation in the sort key, so a group created again starts at 0. */
export const deadLetterCountKey = (group: string, createdAt: number, n: number) => ({ pk: `L#${group}#${n}`, sk: padMs(createdAt) });
/** gsi1 partition of a group's dead-letter links not yet redriven (redrives.ts). */
export const redriveIndexPk = (group: string): string => `Q#${group}`;
/** gsi1 sort key of such a link: when it was dead-lettered, then the copy's id (unique per dead letter). */
/**
 * `order`: the dead-lettered message's sequence number in its stream. Dead letters of one claim share
 * `at`; without it they tied and sorted by the (random-looking) copy id, so a FIFO shard's dead letters
 * came back by redrive out of shard order.
 */
export const redriveIndexSk = (at: number, copyMessageId: string, order?: number): string =>
  order === undefined ? `${padMs(at)}#${copyMessageId}` : `${padMs(at)}#${padSeq(order)}#${copyMessageId}`;

/** The message id in a key-index sort key. */
export const messageIdOfKeyIndexSk = (sk: string): string => sk.slice(MS_WIDTH + 1);

// ── deferred messages (scheduled and half messages) ────────────────────

export const deferredKey = (id: string) => ({ pk: `X#${id}`, sk: 'X' });
/** The id (ULID) named by a deferred item's `pk`. */
export const idOfDeferredPk = (pk: string): string => pk.slice(2);
export const CHECK_RECORD_PREFIX = 'C#';
export const checkRecordKey = (id: string, n: number) => ({ pk: deferredKey(id).pk, sk: `${CHECK_RECORD_PREFIX}${zeroPad(n, 6)}` });

/** Scheduled messages are indexed by due minute, sorted by due time. */
export const minuteOf = (ms: number): number => Math.floor(ms / 60_000);
/**
 * A minute's due-index entries are spread over this many index partitions (docs/design.md,
 * Scheduled and delayed messages, "The due index without a hot key"): one GSI partition key takes
 * about 1,000 write units a second, and every message due in a minute writes its minute's entry
 * at send and removes it at release.
 */
export const DUE_INDEX_BUCKETS = 8;
/** Bucket b of a minute; bucket 0 is the key every earlier version wrote, so their entries are still found. */
export const dueIndexPk = (minute: number, bucket = 0): string => (bucket === 0 ? `T#${minute}` : `T#${minute}#${bucket}`);
/** The due-index bucket of a deferred message (by its ULID). */
export const dueIndexBucketOf = (id: string): number => fnv1a32(id) % DUE_INDEX_BUCKETS;
/** The due-index partition of a deferred message due (or retried) in `minute`. */
export const dueIndexPkOf = (minute: number, id: string): string => dueIndexPk(minute, dueIndexBucketOf(id));
export const dueIndexSk = (dueAt: number, id: string): string => `${padMs(dueAt)}#${id}`;
export const dueIndexUpTo = upTo;
/** The due time in a due-index sort key. */
export const dueOfIndexSk = (sk: string): number => Number(sk.slice(0, MS_WIDTH));

/** Half messages waiting for a check-back are spread over this many index partitions. */
export const CHECK_INDEX_SHARDS = 4;
export const checkIndexPk = (shard: number): string => `K#${shard}`;
/** The check-back index partition of a half message (by the last character of its ULID). */
export const checkIndexPkOf = (id: string): string => checkIndexPk(id.charCodeAt(id.length - 1) % CHECK_INDEX_SHARDS);
export const checkIndexSk = (at: number, id: string): string => `${padMs(at)}#${id}`;
export const checkIndexUpTo = upTo;
/**
 * Where a kept half message (`onMaxChecks: keep`) stays in the check-back index:
 * the last possible time, so no sweep ever finds it due, while a look-up of a
 * producer group's unresolved half messages still finds it.
 */
export const KEPT_CHECK_AT = 10 ** MS_WIDTH - 1;

/** The deployment's message-id key, sealed by the SecretBox (one item, written once). */
export const messageIdKeyKey = { pk: 'CONFIG', sk: 'ids' } as const;

/** The timer sweep's low-water mark: every scheduled message due up to `lo` (ms) was handled. */
export const sweepMarkKey = { pk: 'TIMER', sk: 'low' } as const;

// ── wake markers (armed timer buckets) ─────────────────────────────────

export const WAKE_PK = 'WAKE';
/** A timer bucket: `s` a second, `m` a minute (epoch), 12 digits. */
export const wakeBucket = (kind: 's' | 'm', n: number): string => `${kind}${zeroPad(n, 12)}`;
/** Every bucket of one kind sorts below this. */
export const wakeBucketsEnd = (kind: 's' | 'm'): string => `${kind}~`;
