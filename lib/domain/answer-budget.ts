/**
 * The room left in one JSON answer (docs/design.md, Limits by construction).
 * A synchronous Lambda function answers at most 6 MB; Sluice answers at most
 * `Limits.answerMaxBytes` (5 MB) of JSON (SPEC §3.3). Paths that build large
 * answers take room for each part before they commit to it — a receive
 * before it leases a message, a listing before it puts an item on its page —
 * so an answer never has to drop what it already took.
 */
import { Limits } from './model.js';

/**
 * The UTF-8 bytes of `value` as JSON where Lambda counts them: a handler returns its answer's JSON as
 * the string `body` of `{statusCode, headers, body}`, which Lambda serializes again (each `"` and `\\`
 * escaped once more) before it checks the 6 MB response payload.
 */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(JSON.stringify(value)), 'utf8') - 2;

export class AnswerBudget {
  private used: number;

  /** `usedBytes`: what the answer holds already (its envelope, other fields). */
  constructor(
    readonly limitBytes: number = Limits.answerMaxBytes,
    usedBytes = 0,
  ) {
    this.used = usedBytes;
  }

  get remaining(): number {
    return this.limitBytes - this.used;
  }

  /** Takes room for `bytes` if it is left; false (and nothing taken) otherwise. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  /** Gives back room taken for something the answer will not hold after all. */
  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}
