/**
 * Domain errors. Every error the core raises on purpose is a {@link SluiceError}
 * with a stable machine `code`; the HTTP edge maps them to problem+json by
 * `instanceof` (see `lib/http/problem.ts`). They know nothing of HTTP.
 */
export interface FieldIssue {
  path: string;
  message: string;
}

export abstract class SluiceError extends Error {
  abstract readonly code: string;
  readonly issues: FieldIssue[] | undefined;

  constructor(message: string, options?: { cause?: unknown; issues?: FieldIssue[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.issues = options?.issues;
  }
}

export class InvalidArgumentError extends SluiceError {
  readonly code = 'InvalidArgument';
}
export class PayloadTooLargeError extends SluiceError {
  readonly code = 'PayloadTooLarge';
}
export class DelayTooLongError extends SluiceError {
  readonly code = 'DelayTooLong';
}
export class ShardKeyRequiredError extends SluiceError {
  readonly code = 'ShardKeyRequired';
}
export class NotFoundError extends SluiceError {
  readonly code: string = 'NotFound';
}
export class TopicNotFoundError extends NotFoundError {
  override readonly code = 'TopicNotFound';
  constructor(readonly topic: string) {
    super(`Topic '${topic}' does not exist.`);
  }
}
export class GroupNotFoundError extends NotFoundError {
  override readonly code = 'GroupNotFound';
  constructor(readonly group: string) {
    super(`Consumer group '${group}' does not exist.`);
  }
}
export class MessageNotFoundError extends NotFoundError {
  override readonly code = 'MessageNotFound';
}
export class ProducerGroupNotFoundError extends NotFoundError {
  override readonly code = 'ProducerGroupNotFound';
  constructor(readonly producerGroup: string) {
    super(`Producer group '${producerGroup}' does not exist.`);
  }
}
export class TransactionNotFoundError extends NotFoundError {
  override readonly code = 'TransactionNotFound';
}
/** A resource exists in a shape that the request may not change (e.g. a topic's type). */
export class ConflictError extends SluiceError {
  readonly code: string = 'Conflict';
}
/** The receipt handle is not the latest lease of its message: it cannot commit or change visibility. */
export class ReceiptHandleExpiredError extends SluiceError {
  readonly code = 'ReceiptHandleExpired';
}
/** A topic deleted moments ago cannot be re-created yet (other containers may still use its old settings). */
export class TopicRecentlyDeletedError extends ConflictError {
  override readonly code = 'TopicRecentlyDeleted';
  constructor(
    topic: string,
    readonly retryAfterSeconds: number,
  ) {
    super(`Topic '${topic}' was deleted moments ago; it can be re-created in ${retryAfterSeconds} s.`);
  }
}
/** A group deleted moments ago cannot be re-created yet (other containers may still serve its old settings). */
export class GroupRecentlyDeletedError extends ConflictError {
  override readonly code = 'GroupRecentlyDeleted';
  constructor(
    group: string,
    readonly retryAfterSeconds: number,
  ) {
    super(`Consumer group '${group}' was deleted moments ago; it can be re-created in ${retryAfterSeconds} s.`);
  }
}
/** A producer group still has unresolved half messages: it cannot be deleted. */
export class ProducerInUseError extends ConflictError {
  override readonly code = 'ProducerInUse';
}
/** A push group's messages are delivered by Sluice: its consumers cannot receive them (SPEC §3.9). */
export class PushGroupReceiveError extends ConflictError {
  override readonly code = 'PushGroup';
  constructor(readonly group: string) {
    super(`Consumer group '${group}' is a push group: Sluice delivers its messages to its push target, so it cannot receive. Remove its push settings (PATCH {"push": null}) to make it a pull group.`);
  }
}
/** A topic already has the most push groups it can name (`PushLimits.pushGroupsPerTopicMax`): nothing was saved. */
export class TooManyDeadLetterGroupsError extends ConflictError {
  override readonly code = 'TooManyDeadLetterGroups';
  constructor(
    readonly topic: string,
    readonly max: number,
  ) {
    super(`Topic '${topic}' is the dead-letter topic of ${max} groups already, the most one topic can be; name another deadLetterTopic.`, {
      issues: [{ path: 'deadLetterTopic', message: `is the dead-letter topic of ${max} groups already` }],
    });
  }
}

/**
 * A group save or delete would change topic items whose lists (push groups, parked groups, dead-letter
 * groups) may together pass the 4 MB one DynamoDB transaction takes: nothing was written.
 */
export class TopicItemsTooLargeError extends ConflictError {
  override readonly code = 'TopicItemsTooLarge';
}

export class TooManyPushGroupsError extends ConflictError {
  override readonly code = 'TooManyPushGroups';
  constructor(
    readonly topic: string,
    readonly max: number,
    issues?: FieldIssue[],
  ) {
    super(
      `Topic '${topic}' already has ${max} push groups, the most one topic can have; delete one of them or make it a pull group (PATCH {"push": null}) first.`,
      issues === undefined ? undefined : { issues },
    );
  }
}
/**
 * A partition raise used its time and stopped after a whole step: the topic has `reached`
 * partitions, not yet `wanted`; the same request repeated goes on (docs/design.md, Raising partitions).
 */
export class PartitionRaiseIncompleteError extends ConflictError {
  override readonly code = 'PartitionRaiseIncomplete';
  constructor(
    readonly topic: string,
    readonly reached: number,
    readonly wanted: number,
  ) {
    super(
      `Topic '${topic}' was raised to ${reached} of the ${wanted} partitions asked for before this request ran out of time ` +
        '(every subscribed group gets a cursor per new partition); send the same request again to go on.',
    );
  }
}
export class TransactionAlreadyResolvedError extends ConflictError {
  override readonly code: string = 'TransactionAlreadyResolved';
}
/**
 * A commit of a transaction that was committed but whose message expired before its append was
 * confirmed (a claimed commit left unfinished for its retention): a 200 would claim a delivery
 * the service cannot vouch for (docs/design.md, Transactional messages: Closed claims).
 */
export class TransactionExpiredError extends TransactionAlreadyResolvedError {
  override readonly code = 'TransactionExpired';
}
export class UnauthorizedError extends SluiceError {
  readonly code = 'Unauthorized';
}
/** The store is overloaded or a conditional write kept losing races; the client should retry. */
export class ThrottledError extends SluiceError {
  readonly code = 'Throttled';
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
/**
 * The deployment cannot do what was asked (a dependency refused us: access
 * denied, a missing schedule group or queue). Not the client's fault and not
 * retryable until an operator fixes it: a logged 500 that says so.
 */
export class MisconfiguredError extends SluiceError {
  readonly code = 'Misconfigured';
}
/** A dependency (the database) is unavailable or timed out; retryable. */
export class UnavailableError extends SluiceError {
  readonly code = 'ServiceUnavailable';
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
