/**
 * Splits a commit's `publish` outputs into groups that each fit one
 * TransactWriteItems with room left for the commit's own items
 * (docs/design.md, Limits by construction): every stream segment at most
 * 350 KB as stored, every transaction at most 100 items and 3.9 MB. Outputs
 * keep their order, so outputs of one stream enter it in the order given.
 */
import type { MessageIdCodec } from '../domain/message-ids.js';
import { noticeStreamOf, streamId } from '../domain/streams.js';
import { chunkAppends, noticeBytes, type ChunkReserve, type SizedAppend } from './append-chunks.js';
import type { Outgoing, WritePlanner } from './write-planner.js';

/** A dedup marker or key index entry, at most: keys ≤ 128 characters, message ids ≤ 557, topic names ≤ 128. */
const SIDE_ITEM_BYTES = 2048;

/** What one output costs in a transaction: its record, its notice, its side items (output-plan.ts). */
export function sizedOutput(o: Outgoing, now: number, ids: MessageIdCodec, planner: WritePlanner): SizedAppend<Outgoing> {
  const recordBytes = planner.storedBytes(o, now, ids);
  const sideItems = (o.input.dedupId === undefined ? 0 : 1) + new Set(o.input.keys).size;
  if (o.dueAt !== undefined) {
    // Delayed: no segment; a deferred item that holds the whole record.
    return { item: o, stream: streamId(o.topic, o.local), segmentless: true, notice: undefined, recordBytes, companionBytes: recordBytes + SIDE_ITEM_BYTES * (1 + sideItems), companionItems: 1 + sideItems };
  }
  const local = o.local;
  return {
    item: o,
    stream: streamId(o.topic, local),
    notice:
      local.kind === 'shard'
        ? { stream: noticeStreamOf(o.topic, local.shardKey), bytes: noticeBytes(local.shardKey) }
        : undefined,
    recordBytes,
    companionBytes: SIDE_ITEM_BYTES * sideItems,
    companionItems: sideItems,
  };
}

/**
 * `outgoing` in order, in groups that each fit one transaction next to
 * `reserve`; always at least one group (empty when there are no outputs).
 */
export function chunkOutputs(sized: Array<SizedAppend<Outgoing>>, reserve: ChunkReserve): Outgoing[][] {
  const chunks = chunkAppends(sized, reserve).map((chunk) => chunk.map((s) => s.item));
  return chunks.length > 0 ? chunks : [[]];
}
