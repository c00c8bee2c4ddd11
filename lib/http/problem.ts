/**
 * The one table that maps domain errors to HTTP (RFC 9457 problem+json).
 * Mapping is by `instanceof`; anything not a SluiceError is an opaque 500.
 */
import {
  ConflictError,
  TopicRecentlyDeletedError,
  DelayTooLongError,
  InvalidArgumentError,
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

const TABLE: Array<[abstract new (...args: never[]) => SluiceError, number, string]> = [
  [PayloadTooLargeError, 413, 'Payload too large'],
  [DelayTooLongError, 400, 'Delay too long'],
  [ShardKeyRequiredError, 400, 'Shard key required'],
  [InvalidArgumentError, 400, 'Invalid argument'],
  [NotFoundError, 404, 'Not found'],
  [ReceiptHandleExpiredError, 409, 'Receipt handle expired'],
  [ConflictError, 409, 'Conflict'],
  [UnauthorizedError, 401, 'Unauthorized'],
  [ThrottledError, 429, 'Throttled'],
  [UnavailableError, 503, 'Service unavailable'],
];

export const problemType = (code: string) => `urn:sluice:problem:${code}`;

export interface ProblemResponse {
  problem: Problem;
  headers: Record<string, string>;
  /** True when the error was not one we raise on purpose (log it, hide it). */
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
  if (error instanceof SluiceError) {
    const row = TABLE.find(([type]) => error instanceof type);
    const status = row?.[1] ?? 400;
    const headers: Record<string, string> = {};
    if (error instanceof ThrottledError || error instanceof UnavailableError || error instanceof TopicRecentlyDeletedError) {
      headers['retry-after'] = String(error.retryAfterSeconds);
    }
    return {
      problem: withIssues(
        { type: problemType(error.code), title: row?.[2] ?? 'Bad request', status, detail: error.message, code: error.code },
        error.issues,
      ),
      headers,
      unexpected: false,
    };
  }
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
