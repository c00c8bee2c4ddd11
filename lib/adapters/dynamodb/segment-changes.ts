/**
 * Reads a stream-segment INSERT out of a change record of the table's stream:
 * which stream and sequence numbers it holds, the topics of its messages and
 * the flags that asked for the dispatcher (see dispatch-source.ts).
 */
import type { ChangeRecord } from '../../ports/change-stream.js';
import { NOTICE_FLAG, SENTINEL_SK, STREAM_PK_PREFIX, WAKE_FLAG, WAKE_TOPICS } from './dispatch-source.js';
import { storedRecordsOf } from './segment-records.js';
import { imageOf } from './stream-records.js';

/** A segment that was just appended, as the dispatcher routes it. */
export interface SegmentChange {
  /** The change record's `SequenceNumber`: what a partial batch response names. */
  id: string;
  stream: string;
  /** First sequence number and number of messages of the segment. */
  seq: number;
  count: number;
  /** The distinct topics of its messages (a time-order group's shard streams carry several; a notice segment's `wt`). */
  topics: string[];
  /** `nf`: the FIFO notice lane to announce the segment on. */
  noticeLane: number | undefined;
  /** `w`: a waiter or push group of these topics needs to hear of it. */
  wake: boolean;
}

/**
 * A segment insert whose packed records (`mz`) do not inflate to a whole frame: which segment, and
 * why in a word (the zlib error code or the error's class), never the bytes or what parsed of them.
 * Retrying cannot mend it, and its messages cannot be read by anyone (docs/design.md, The dispatcher).
 */
export class UnreadableSegmentError extends Error {
  constructor(
    readonly id: string,
    readonly stream: string,
    readonly seq: number,
    readonly count: number,
    readonly reason: string,
  ) {
    super(`segment ${stream} ${seq} (${count} messages, change ${id}) is unreadable: ${reason}`);
    this.name = 'UnreadableSegmentError';
  }
}

/** A word for why a segment did not read: zlib's code (`Z_DATA_ERROR`…) or the error's class. */
const reasonOf = (error: unknown): string => {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'unknown';
};

/**
 * The segment a change record inserted, or undefined for any other change
 * (the event source's filters already drop those; the handler does not rely on it).
 * Throws {@link UnreadableSegmentError} for a segment whose packed records do not read.
 */
export function segmentChangeOf(record: ChangeRecord): SegmentChange | undefined {
  const id = record.dynamodb?.SequenceNumber;
  if (record.eventName !== 'INSERT' || id === undefined) return undefined;
  const item = imageOf(record.dynamodb?.NewImage);
  if (!item || typeof item.pk !== 'string' || typeof item.sk !== 'string') return undefined;
  if (!item.pk.startsWith(STREAM_PK_PREFIX) || item.sk === SENTINEL_SK) return undefined;
  const seq = Number(item.sk);
  if (!Number.isSafeInteger(seq)) return undefined;
  // A notice segment names its messages' topics in `wt` (its entries' `t` is a sequence number);
  // a message segment's entries are per record (`m`) or packed (`mz`, inflated here).
  const stream = item.pk.slice(STREAM_PK_PREFIX.length);
  const count = Number(item.n ?? (Array.isArray(item.m) ? item.m.length : 0));
  let named: unknown[];
  try {
    named = Array.isArray(item[WAKE_TOPICS]) ? (item[WAKE_TOPICS] as unknown[]) : storedRecordsOf(item).map((m) => m.t as unknown);
  } catch (error) {
    throw new UnreadableSegmentError(id, stream, seq, count, reasonOf(error));
  }
  const topics = [...new Set(named.filter((t): t is string => typeof t === 'string'))];
  const lane = item[NOTICE_FLAG];
  return {
    id,
    stream,
    seq,
    count,
    topics,
    noticeLane: typeof lane === 'number' ? lane : undefined,
    wake: item[WAKE_FLAG] !== undefined,
  };
}
