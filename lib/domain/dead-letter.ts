/**
 * The properties a dead-letter copy adds to its message (SPEC §3.1, README "Dead letters"), and
 * the bytes they take at most: every message admitted leaves room for them in its segment item
 * (docs/design.md, Dead letters, "Its size").
 */
import { Limits } from './model.js';
import { MESSAGE_ID_LONGEST } from './message-ids.js';

export const DeadLetterProperty = {
  sourceTopic: 'sluice-dead-letter-source-topic',
  sourceMessageId: 'sluice-dead-letter-source-message-id',
  group: 'sluice-dead-letter-group',
  deliveryCount: 'sluice-dead-letter-delivery-count',
  reason: 'sluice-dead-letter-reason',
} as const;

/** Every property the copy adds (a redrive removes them: the redriven message is the original again). */
export const DEAD_LETTER_PROPERTIES: readonly string[] = Object.values(DeadLetterProperty);

/** Why a message was dead-lettered (`sluice-dead-letter-reason`). */
export type DeadLetterReason = 'released' | 'lease-expired';

/**
 * Longest value of each added property: names (topic, group) are ASCII (NAME_PATTERN), ids ASCII
 * base64url, the delivery count a safe integer (in practice ≤ `Limits.maxDeliveriesMax`).
 */
const LONGEST_VALUE: Record<keyof typeof DeadLetterProperty, number> = {
  sourceTopic: Limits.nameMaxLength,
  sourceMessageId: MESSAGE_ID_LONGEST,
  group: Limits.nameMaxLength,
  deliveryCount: String(Number.MAX_SAFE_INTEGER).length,
  reason: Math.max(...(['released', 'lease-expired'] satisfies DeadLetterReason[]).map((r) => r.length)),
};

/**
 * Bytes the added properties take at most in a stored record's property map, by DynamoDB's
 * item-size rules: name + value + 1 byte per map entry (996). An upper bound also when the
 * message had properties of these names already (the copy replaces them).
 */
export const DEAD_LETTER_PROPERTIES_MAX_BYTES = (Object.keys(DeadLetterProperty) as Array<keyof typeof DeadLetterProperty>).reduce(
  (sum, p) => sum + Buffer.byteLength(DeadLetterProperty[p], 'utf8') + LONGEST_VALUE[p] + 1,
  0,
);
