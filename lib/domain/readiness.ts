/**
 * What a commit does to a FIFO shard's ready-index entry (docs/design.md,
 * Ready index). Pure: the claim guesses, the commit writes the guess under
 * conditions that prove it, and when only those conditions fail it decides
 * again from the cursor as it was — here, for the DynamoDB adapter and the
 * committer alike.
 */
import type { CursorState } from './cursor.js';

/**
 * What a commit should do to a FIFO shard's ready-index entry, from the cursor after it:
 * `ready`  known messages after `nx` (the shard may have been blocked: put it on the index, ready now);
 * `keep`   nothing after `nx` but leases remain (their expiry is indexed already: leave the entry alone);
 * `drop`   nothing after `nx` and no lease left (idle until a notice: leave the index).
 */
export type Readiness = 'ready' | 'keep' | 'drop';
export const readinessAfterCompletion = (known: number | undefined, next: number, leasesLeft: number): Readiness =>
  known === undefined || known >= next ? 'ready' : leasesLeft > 0 ? 'keep' : 'drop';

/**
 * FIFO lease tokens carry the claim's guess of what their commit will do to
 * the ready index (`<deliveries>.<random>.<r|k|d>`). Only a guess: the commit
 * writes it under conditions that prove it, and otherwise decides again from
 * the cursor.
 */
const HINTS: Record<string, Readiness> = { r: 'ready', k: 'keep', d: 'drop' };
export const hintedToken = (token: string, readiness: Readiness): string => `${token}.${readiness[0]}`;
export const readinessHint = (token: string): Readiness | undefined => HINTS[token.split('.')[2] ?? ''];
/** One write commits several leases of a stream: `ready` if any says so, else `drop` if any, else `keep`. */
export const combinedHint = (tokens: string[]): Readiness | undefined => {
  const hints = tokens.map(readinessHint);
  if (hints.includes('ready') || hints.includes(undefined)) return hints.every((h) => h === undefined) ? undefined : 'ready';
  return hints.includes('drop') ? 'drop' : 'keep';
};

/** A commit's ready-index write; `guarded` adds the conditions that prove it. */
export interface CommitReadiness {
  readiness: Readiness;
  guarded: boolean;
  /**
   * Protected mode, `keep`: the lowest lease left after the commit, which must not be a pending
   * commit (one marked meanwhile, its blocker now completed, is work to cascade: ready now).
   */
  head?: number;
}

/** Ready now, unconditionally: always safe (an early entry only costs a look), the last resort. */
export const READY_NOW: CommitReadiness = { readiness: 'ready', guarded: false };

/**
 * Attempts of one commit write: the claim's guess, then what the cursor as
 * it was says, then ready now unconditionally.
 */
export const COMMIT_ATTEMPTS = 3;

/** The readiness write the claim guessed for these leases' commit (no hint: ready now, guarded). */
export const guessedReadiness = (tokens: string[]): CommitReadiness => ({ readiness: combinedHint(tokens) ?? 'ready', guarded: true });

/**
 * The readiness write a commit of `completing` leases should make, decided
 * from the cursor as read; from the last attempt on, ready now unconditionally.
 */
export const readinessFor = (cursor: CursorState, completing: number, attempt = 0): CommitReadiness =>
  attempt >= COMMIT_ATTEMPTS - 1
    ? { ...READY_NOW }
    : { readiness: readinessAfterCompletion(cursor.known, cursor.next, cursor.leases.size - completing), guarded: true };

/**
 * After attempt `attempt` (from 1) of a commit of `entries` failed its
 * condition: when every lease is still in the cursor with its token, only the
 * readiness guess was wrong — the write to try next, decided from the cursor
 * as the failed attempt saw it. Undefined when a lease is gone or changed (the
 * commit itself failed) or the attempts are used up.
 */
export const retryReadiness = (
  cursor: CursorState,
  entries: ReadonlyArray<{ seq: number; token: string }>,
  attempt: number,
): CommitReadiness | undefined => {
  if (attempt >= COMMIT_ATTEMPTS) return undefined;
  if (!entries.every((e) => cursor.leases.get(e.seq)?.token === e.token)) return undefined;
  return readinessFor(cursor, entries.length, attempt);
};
