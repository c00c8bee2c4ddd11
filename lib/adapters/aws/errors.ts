/**
 * AWS SDK failures the SDK's own retries did not absorb, as retryable domain
 * errors (429/503 at the edge). Shared by every AWS adapter: DynamoDB, SQS,
 * EventBridge Scheduler.
 */
import { ThrottledError, UnavailableError, SluiceError } from '../../domain/errors.js';

/** "Slow down": retry later (429). */
const THROTTLE_NAMES = new Set([
  // DynamoDB
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'TransactionInProgressException',
  // SQS and Scheduler spellings
  'RequestThrottled',
  'TooManyRequestsException',
]);
/** "Not now": the service or the connection failed (503). */
const UNAVAILABLE_NAMES = new Set([
  // DynamoDB and the SDK's own
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

/**
 * Turns an AWS SDK failure into a retryable domain error when it only says
 * "busy" or "unavailable"; anything else is returned unchanged (and becomes an
 * opaque 500). `busy` recognises service-specific busy answers (DynamoDB: a
 * transaction cancelled only for conflicts or throttling).
 */
export function translateAwsError(error: unknown, busy: (error: Error) => boolean = () => false): unknown {
  if (error instanceof SluiceError) return error;
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
    if (THROTTLE_NAMES.has(error.name) || status === 429 || busy(error)) {
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
