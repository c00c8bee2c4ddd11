/**
 * When and how long the client waits before trying a request again.
 *
 * Retried: 429 `Throttled`, 503 `ServiceUnavailable` and requests that got no
 * answer (connection refused or reset, DNS failure, timeout). Every v1 call is
 * safe to repeat: PUT/GET/DELETE are idempotent, commits and transaction
 * resolutions are idempotent by the SPEC, and the client gives every send a
 * `dedupId` before the first attempt. A repeated receive may lease messages
 * whose answer was lost; they come back after their visibility timeout
 * (at-least-once), as with any lost receive.
 */

export interface RetryOptions {
  /** Attempts in all, the first included (default 4; 1 disables retries). */
  maxAttempts?: number;
  /** Base of the exponential backoff (default 100 ms). */
  baseDelayMs?: number;
  /** Cap of one backoff delay (default 5 s). */
  maxDelayMs?: number;
  /** Cap of a server's Retry-After that the client honours (default 20 s). */
  maxRetryAfterMs?: number;
}

export type ResolvedRetryOptions = Required<RetryOptions>;

export const DEFAULT_RETRY: ResolvedRetryOptions = {
  maxAttempts: 4,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 20_000,
};

export const RETRYABLE_STATUS = new Set([429, 503]);

/**
 * "Full jitter" exponential backoff: a uniformly random delay in
 * [0, min(maxDelay, base × 2^(attempt-1))], so that many clients throttled at
 * once do not come back in step. `attempt` is the attempt that just failed (1-based).
 */
export function backoffDelay(attempt: number, options: ResolvedRetryOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/** Parses a Retry-After header (delta-seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * How long to wait before the next attempt: the server's Retry-After when it
 * gave one (capped), and never less than the jittered backoff.
 */
export function retryDelay(
  attempt: number,
  retryAfterMs: number | undefined,
  options: ResolvedRetryOptions,
  random: () => number = Math.random,
): number {
  const backoff = backoffDelay(attempt, options, random);
  if (retryAfterMs === undefined) return backoff;
  return Math.max(Math.min(retryAfterMs, options.maxRetryAfterMs), backoff);
}
