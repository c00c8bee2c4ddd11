import { ThrottledError, UnavailableError, SluiceError } from '../../domain/errors.js';

const THROTTLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'TransactionInProgressException',
]);
const UNAVAILABLE_NAMES = new Set(['InternalServerError', 'ServiceUnavailable', 'TimeoutError', 'RequestTimeout', 'AbortError']);

/**
 * Turns an AWS SDK failure that the SDK's own retries did not absorb into a
 * retryable domain error (429/503 at the edge); anything else is rethrown
 * unchanged and becomes an opaque 500.
 */
export function translateAwsError(error: unknown): unknown {
  if (error instanceof SluiceError) return error;
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    if (THROTTLE_NAMES.has(error.name)) {
      return new ThrottledError('The message store is busy; retry the request.', 1, { cause: error });
    }
    if (
      UNAVAILABLE_NAMES.has(error.name) ||
      code === 'ECONNREFUSED' ||
      code === 'ECONNRESET' ||
      code === 'ETIMEDOUT' ||
      (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 503
    ) {
      return new UnavailableError('The message store is unavailable; retry the request.', 1, { cause: error });
    }
  }
  return error;
}

export const isConditionalFailure = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/** Reasons of a cancelled transaction, one per item (`'None'` where that item was fine). */
export const cancellationReasons = (error: unknown): string[] | undefined => {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
  return reasons.map((reason) => reason.Code ?? 'None');
};
