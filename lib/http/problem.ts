/**
 * The one table that maps domain errors to HTTP (RFC 9457 problem+json): status, title and
 * `retry-after`. Mapping is by `instanceof`; anything else — not a SluiceError, or a SluiceError
 * without a row — is an opaque 500.
 */
import {
  ConflictError,
  TopicRecentlyDeletedError,
  GroupRecentlyDeletedError,
  DelayTooLongError,
  InvalidArgumentError,
  MisconfiguredError,
  NotFoundError,
  PayloadTooLargeError,
  ReceiptHandleExpiredError,
  ShardKeyRequiredError,
  SluiceError,
  ThrottledError,
  UnauthorizedError,
  UnavailableError,
  type FieldIssue,
} from '../domain/errors.js';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldIssue[];
}

/** Errors raised by the HTTP edge itself (not the domain). */
export class HttpProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    message: string,
    readonly issues?: FieldIssue[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpProblemError';
  }
}

/** One row of the table: the error class (its subclasses match too), its status and title. */
interface ProblemRow<E extends SluiceError = SluiceError> {
  error: abstract new (...args: never[]) => E;
  status: number;
  title: string;
  /** Retryable errors: the seconds of the `retry-after` header. */
  retryAfter?(error: E): number;
  /** Errors an operator must see: logged with their cause (the problem still says what failed). */
  log?: true;
}

/** A row, typed by its error class (so that `retryAfter` sees that class's fields). */
const row = <E extends SluiceError>(spec: ProblemRow<E>): ProblemRow => spec;

/** First match wins: a subclass with a row of its own comes before its parent's. */
const TABLE: readonly ProblemRow[] = [
  row({ error: PayloadTooLargeError, status: 413, title: 'Payload too large' }),
  row({ error: DelayTooLongError, status: 400, title: 'Delay too long' }),
  row({ error: ShardKeyRequiredError, status: 400, title: 'Shard key required' }),
  row({ error: InvalidArgumentError, status: 400, title: 'Invalid argument' }),
  row({ error: NotFoundError, status: 404, title: 'Not found' }),
  row({ error: ReceiptHandleExpiredError, status: 409, title: 'Receipt handle expired' }),
  row({ error: TopicRecentlyDeletedError, status: 409, title: 'Conflict', retryAfter: (error) => error.retryAfterSeconds }),
  row({ error: GroupRecentlyDeletedError, status: 409, title: 'Conflict', retryAfter: (error) => error.retryAfterSeconds }),
  row({ error: ConflictError, status: 409, title: 'Conflict' }),
  row({ error: UnauthorizedError, status: 401, title: 'Unauthorized' }),
  row({ error: ThrottledError, status: 429, title: 'Throttled', retryAfter: (error) => error.retryAfterSeconds }),
  row({ error: UnavailableError, status: 503, title: 'Service unavailable', retryAfter: (error) => error.retryAfterSeconds }),
  row({ error: MisconfiguredError, status: 500, title: 'Service misconfigured', log: true }),
];

export const problemType = (code: string) => `urn:sluice:problem:${code}`;

export interface ProblemResponse {
  problem: Problem;
  headers: Record<string, string>;
  /** True when the error must be logged: not one we raise on purpose (then hidden), or a misconfiguration. */
  unexpected: boolean;
}

export function toProblem(error: unknown): ProblemResponse {
  if (error instanceof HttpProblemError) {
    return {
      problem: withIssues(
        { type: problemType(error.code), title: error.title, status: error.status, detail: error.message, code: error.code },
        error.issues,
      ),
      headers: error.headers,
      unexpected: false,
    };
  }
  const match = error instanceof SluiceError ? TABLE.find(({ error: type }) => error instanceof type) : undefined;
  if (error instanceof SluiceError && match) {
    return {
      problem: withIssues({ type: problemType(error.code), title: match.title, status: match.status, detail: error.message, code: error.code }, error.issues),
      headers: match.retryAfter ? { 'retry-after': String(match.retryAfter(error)) } : {},
      unexpected: match.log === true,
    };
  }
  // Not a SluiceError, or one without a row (test/unit/problem.test.ts fails on such a class): an opaque, logged 500.
  return {
    problem: {
      type: problemType('InternalError'),
      title: 'Internal error',
      status: 500,
      detail: 'The request failed unexpectedly; it has been logged.',
      code: 'InternalError',
    },
    headers: {},
    unexpected: true,
  };
}

const withIssues = (problem: Problem, issues: FieldIssue[] | undefined): Problem =>
  issues && issues.length > 0 ? { ...problem, errors: issues } : problem;
