import { ThrottledError, UnavailableError, SluiceError } from '../../domain/errors.js';

const THROTTLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'TransactionInProgressException',
  // SQS and Scheduler spellings
  'RequestThrottled',
  'TooManyRequestsException',
]);
const UNAVAILABLE_NAMES = new Set([
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'AbortError',
  // SQS and Scheduler spellings
  'InternalServerException',
  'ServiceUnavailableException',
  'InternalFailure',
  'InternalError',
]);
/** Reasons of a cancelled transaction that only say "busy, try again". */
const BUSY_REASONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

/**
 * Turns an AWS SDK failure that the SDK's own retries did not absorb into a
 * retryable domain error (429/503 at the edge); anything else is rethrown
 * unchanged and becomes an opaque 500.
 */
export function translateAwsError(error: unknown): unknown {
  if (error instanceof SluiceError) return error;
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
    if (THROTTLE_NAMES.has(error.name) || status === 429 || cancellationReasons(error)?.some((reason) => BUSY_REASONS.has(reason))) {
      return new ThrottledError('The message store is busy; retry the request.', 1, { cause: error });
    }
    if (
      UNAVAILABLE_NAMES.has(error.name) ||
      code === 'ECONNREFUSED' ||
      code === 'ECONNRESET' ||
      code === 'ETIMEDOUT' ||
      code === 'EPIPE' ||
      status >= 500
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
