/**
 * Errors the client throws. One base class; `SluiceApiError` carries the
 * server's problem+json, `SluiceConnectionError` says that no answer came.
 */
import type { Problem } from './types.js';

/** Base class of every error the Sluice client raises on purpose. */
export class SluiceClientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }
}

/**
 * The server answered with an error (RFC 9457 problem+json). `code` is the
 * stable machine name (`TopicNotFound`, `ReceiptHandleExpired`, …), `errors`
 * the field-level issues of an `InvalidArgument`.
 */
export class SluiceApiError extends SluiceClientError {
  readonly status: number;
  readonly code: string;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  readonly errors: Array<{ path: string; message: string }> | undefined;
  /** Seconds the server asked to wait (429/503), if it said. */
  readonly retryAfterSeconds: number | undefined;
  /** The gateway's request id, for the server's logs. */
  readonly requestId: string | undefined;
  readonly method: string;
  readonly url: string;

  constructor(
    problem: Problem,
    request: { method: string; url: string; requestId?: string | undefined; retryAfterSeconds?: number | undefined },
  ) {
    super(`${problem.code}: ${problem.detail}`);
    this.status = problem.status;
    this.code = problem.code;
    this.type = problem.type;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors;
    this.retryAfterSeconds = request.retryAfterSeconds;
    this.requestId = request.requestId;
    this.method = request.method;
    this.url = request.url;
  }

  /** The problem+json body as the server sent it. */
  toProblem(): Problem {
    return {
      type: this.type,
      title: this.title,
      status: this.status,
      detail: this.detail,
      code: this.code,
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

/** No answer: the endpoint refused the connection, did not resolve, or timed out (after the retries). */
export class SluiceConnectionError extends SluiceClientError {
  constructor(
    readonly endpoint: string,
    readonly url: string,
    /** `ECONNREFUSED`, `ENOTFOUND`, `Timeout`, … when known. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`Cannot reach Sluice at ${endpoint} (${reason}).`, options);
  }
}

/** The client is configured so that it cannot sign or send a request (e.g. no AWS region for SigV4). */
export class SluiceConfigurationError extends SluiceClientError {}
