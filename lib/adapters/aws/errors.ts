/**
 * AWS SDK failures the SDK's own retries did not absorb, as retryable domain
 * errors (429/503 at the edge). Shared by every AWS adapter: DynamoDB, SQS,
 * EventBridge Scheduler.
 */
import { MisconfiguredError, ThrottledError, UnavailableError, SluiceError } from '../../domain/errors.js';

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

/** What an operator should check when a timer dependency refuses us, by the AWS error name. */
const MISCONFIGURATION_HINTS: Record<string, string> = {
  AccessDeniedException: 'the function may not use it (IAM policy, or passing the scheduler role)',
  AccessDenied: 'the function may not use it (IAM policy)',
  ResourceNotFoundException: 'the schedule group or the target does not exist',
  'AWS.SimpleQueueService.NonExistentQueue': 'the queue does not exist',
  QueueDoesNotExist: 'the queue does not exist',
  ValidationException: 'it refused the request as built from the deployment settings',
  KMSAccessDeniedException: 'the queue\'s KMS key may not be used',
};

/**
 * A failure of a timer dependency (EventBridge Scheduler, the SQS delay
 * queue) as a typed error: busy or unavailable → retryable 429/503 (as
 * {@link translateAwsError}); `ServiceQuotaExceededException` → 503 with a
 * minute's Retry-After (schedules complete and delete themselves); any other
 * answer of the service (4xx: access denied, a missing group or queue, a
 * refused request) → {@link MisconfiguredError}, a 500 that names the service
 * and is logged with its cause. Errors that are not AWS answers pass unchanged.
 */
export function translateTimerError(error: unknown, service: string): unknown {
  const translated = translateAwsError(error);
  if (translated !== error || !(error instanceof Error)) return translated;
  if (error.name === 'ServiceQuotaExceededException') {
    return new UnavailableError(`${service} refused a timer: its quota is exhausted; retry in a minute.`, 60, { cause: error });
  }
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status === undefined && !(error.name in MISCONFIGURATION_HINTS)) return error;
  const hint = MISCONFIGURATION_HINTS[error.name] ?? 'it refused the request';
  return new MisconfiguredError(`Timers are misconfigured: ${service} answered ${error.name} (${hint}). The cause is logged; an operator must fix the deployment.`, {
    cause: error,
  });
}
