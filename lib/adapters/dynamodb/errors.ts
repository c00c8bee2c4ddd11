/** DynamoDB's own failure shapes: failed conditions and cancelled transactions. */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { translateAwsError } from '../aws/errors.js';

export const isConditionalFailure = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/** Reasons of a cancelled transaction, one per item (`'None'` where that item was fine). */
export const cancellationReasons = (error: unknown): string[] | undefined => {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
  return reasons.map((reason) => reason.Code ?? 'None');
};

/**
 * The old images a cancelled transaction returned, one per item (undefined where there is none:
 * the item passed, asked for none, or had no item), as DynamoDB sent them (marshalled).
 */
export const cancellationImages = (error: unknown): Array<Record<string, AttributeValue> | undefined> => {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return [];
  const reasons = (error as { CancellationReasons?: Array<{ Item?: Record<string, AttributeValue> }> }).CancellationReasons ?? [];
  return reasons.map((reason) => reason.Item);
};

/** Reasons of a cancelled transaction that only say "busy, try again". */
const BUSY_REASONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

/** A DynamoDB failure as a retryable domain error where it only says "busy" or "unavailable" (see {@link translateAwsError}). */
export const translateDynamoError = (error: unknown): unknown =>
  translateAwsError(error, (e) => cancellationReasons(e)?.some((reason) => BUSY_REASONS.has(reason)) ?? false);
