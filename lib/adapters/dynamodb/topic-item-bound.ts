/**
 * How large a topic item can be, from the lengths of the three lists that
 * make it large, so that a transaction touching many topic items stays
 * within DynamoDB's 4 MB aggregate by construction (docs/design.md, "A group
 * save's transaction within 4 MB").
 *
 * A topic item holds three lists of group names, each bounded: `pg` (its push
 * groups, `PushLimits.pushGroupsPerTopicMax`), `wb` (its parked pull groups,
 * name → until, `DoorbellLimits.parkedGroupsPerTopicMax`) and `dg` (the
 * groups whose dead-letter topic it is, `Limits.deadLetterGroupsPerTopicMax`).
 * Everything else on it — names, counters, `gs` and `pw` with up to
 * `Limits.partitionsMax` sequence numbers each — stays under
 * {@link TOPIC_ITEM_REST_MAX_BYTES}. Names are ASCII (`NAME_PATTERN`): a
 * character is a byte.
 */
import { DoorbellLimits } from '../../domain/doorbell-limits.js';
import { Limits } from '../../domain/model.js';
import { PushLimits } from '../../domain/push.js';
import { ITEM_MAX_BYTES, TRANSACTION_MAX_BYTES, itemBytes } from './item-size.js';

/** How many names each of a topic item's three lists holds. */
export interface TopicListCounts {
  pushGroups: number;
  parked: number;
  deadLetterGroups: number;
}

/**
 * A topic item without its three lists, at most (bytes): 2 × 256 sequence numbers of ≤ 21 B plus
 * 1 B each in `gs` and `pw` (11,270 B with their names and list overhead), two names of ≤ 128 B and
 * about 20 small attributes; measured on the widest item in test/integration/topic-item-bound.test.ts.
 */
export const TOPIC_ITEM_REST_MAX_BYTES = 16 * 1024;

/** Bytes of a name in a set (`pg`, `dg`) and of an entry in the map `wb` (name, a number of ≤ 21 B, 1 B). */
const NAME_BYTES = Limits.nameMaxLength;
const PARKED_ENTRY_BYTES = Limits.nameMaxLength + 21 + 1;

/** The most a topic item with lists of these lengths can take (bytes; item-size.ts counting). */
export const topicItemBoundBytes = (counts: TopicListCounts): number =>
  TOPIC_ITEM_REST_MAX_BYTES + counts.pushGroups * NAME_BYTES + 3 + counts.parked * PARKED_ENTRY_BYTES + counts.deadLetterGroups * NAME_BYTES;

/** The most any topic item can take: every list at its maximum (≈ 358 KB). */
export const TOPIC_ITEM_MAX_BYTES = topicItemBoundBytes({
  pushGroups: PushLimits.pushGroupsPerTopicMax,
  parked: DoorbellLimits.parkedGroupsPerTopicMax,
  deadLetterGroups: Limits.deadLetterGroupsPerTopicMax,
});

/**
 * How many topic items one transaction takes beside one group item when every one of them may be
 * at its maximum (9): a save or delete touching no more needs no read of them.
 */
export const TOPIC_ITEMS_AT_WORST = Math.floor((TRANSACTION_MAX_BYTES - ITEM_MAX_BYTES) / TOPIC_ITEM_MAX_BYTES);

/** The most bytes a number takes (item-size.ts): a `wb` entry's value may be rewritten that long. */
const NUMBER_MAX_BYTES = 21;

/**
 * The most a topic item can take when its lists, read as `lists` (`pg`, `wb`, `dg` of the stored
 * item), keep at most the lengths read — the transaction is conditional on that
 * ({@link LIST_PIN_CONDITION}) — and the update adds `adds` names: the rest at its maximum, the
 * lists' bytes as read, every `wb` value rewritten at 21 B (a park refresh), and each name added at
 * the longest. Not covered: a name taken out of a list and a longer one put in by other writes
 * between the read and the transaction, ≤ 127 B each — the budget's margin below DynamoDB's 4 MB
 * (≥ 100,000 B) takes 781 of them, and such a write of a large topic item costs its size in write
 * units (≤ 1,000 a second on the item: a 100 KB item takes ≈ 10 writes a second), so a save's
 * round trip meets a few at most (docs/design.md, "A group save's transaction within 4 MB").
 */
export const topicItemBoundFromRead = (lists: Record<string, unknown> | undefined, adds: Partial<TopicListCounts>): number => {
  const read = { pg: lists?.pg, wb: lists?.wb, dg: lists?.dg };
  return (
    TOPIC_ITEM_REST_MAX_BYTES +
    itemBytes(read) +
    listCountsOf(lists).parked * NUMBER_MAX_BYTES +
    (adds.pushGroups ?? 0) * NAME_BYTES +
    (adds.parked ?? 0) * PARKED_ENTRY_BYTES +
    (adds.deadLetterGroups ?? 0) * NAME_BYTES
  );
};

/** The lengths of a stored topic item's lists (absent lists: 0). */
export const listCountsOf = (item: Record<string, unknown> | undefined): TopicListCounts => ({
  pushGroups: item?.pg instanceof Set ? item.pg.size : 0,
  parked: item?.wb !== undefined && item.wb !== null && typeof item.wb === 'object' ? Object.keys(item.wb).length : 0,
  deadLetterGroups: item?.dg instanceof Set ? item.dg.size : 0,
});

/**
 * The condition that keeps an item's lists no longer than `counts` when the write lands (values from
 * {@link listPinValues}): the bound computed from the read then holds for the item the transaction
 * writes, whatever was written to it in between (a list that grew fails the write; the caller reads
 * again).
 */
export const LIST_PIN_CONDITION =
  '(attribute_not_exists(pg) OR size(pg) <= :pinPg) AND (attribute_not_exists(wb) OR size(wb) <= :pinWb) AND (attribute_not_exists(dg) OR size(dg) <= :pinDg)';

/** The values of {@link LIST_PIN_CONDITION} for lists read at `counts`. */
export const listPinValues = (counts: TopicListCounts): Record<string, number> => ({
  ':pinPg': counts.pushGroups,
  ':pinWb': counts.parked,
  ':pinDg': counts.deadLetterGroups,
});
