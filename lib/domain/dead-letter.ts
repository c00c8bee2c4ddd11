/**
 * The properties a dead-letter copy adds to its message (SPEC §3.1, README "Dead letters").
 */

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
