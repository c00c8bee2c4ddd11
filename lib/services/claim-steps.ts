/**
 * The deferred item's writes of a claimed append (claimed-release.ts), for
 * each kind of deferred message that enters a standard stream that way
 * (docs/design.md, Scheduled and delayed messages: Release; Transactional
 * messages: Commit):
 *
 *   release  scheduled → releasing → released   expired: expired   closed: cancelled   dropped: its topic is gone, or purged after its send
 *   commit   prepared  → committing → committed  expired: expired   closed: committed   dropped: its topic is gone (an unclaimed half message stays prepared)
 *
 * `expired`: a claim a finisher reached only within 60 s of its records' expiry, its slot not holding
 * the message (claimed-release.ts): appended once and removed by TTL, or never — the item says so,
 * never `released` or `committed`. `closed`: a claim whose topic was deleted (a release also: purged).
 * A claimed commit is never rolled back: the commit won at its claim (a rollback answers 409 from
 * then on).
 */
import type { Topic } from '../domain/model.js';
import type { Deferred, DeferredStore, ReleaseClaim } from '../adapters/dynamodb/deferred.js';

export interface ClaimSteps {
  /** Claims the item for `claim`, taking over the claim whose token is `expect` (none: the item must still be waiting). */
  claim(d: Deferred, claim: ReleaseClaim, expect: string | undefined): Promise<boolean>;
  /** Marks the claimed item appended at `address`; false unless `token` is still its claim. */
  mark(id: string, address: { stream: string; seq: number }, token: string): Promise<boolean>;
  /** Closes a claim that will not be appended because its topic went; false unless `token` is still its claim. */
  close(id: string, token: string): Promise<boolean>;
  /** Closes a claim past its records' expiry as `expired` (appended once or never); false unless `token` is still its claim. */
  expire(id: string, token: string): Promise<boolean>;
  /** Whether the item's topic (undefined: deleted) no longer takes it. */
  dropped(d: Deferred, topic: Topic | undefined): boolean;
  /** What becomes of an item not claimed yet that its topic no longer takes. */
  drop(d: Deferred): Promise<void>;
}

const gone = (d: Deferred, topic: Topic | undefined): topic is undefined => !topic || topic.generation !== d.record.generation;

/** A scheduled message's release. */
export const releaseSteps = (deferred: DeferredStore): ClaimSteps => ({
  claim: (d, claim, expect) => deferred.claimRelease(d.id, claim, expect),
  mark: (id, address, token) => deferred.markReleased(id, address, token),
  close: (id, token) => deferred.cancelClaimed(id, token),
  expire: (id, token) => deferred.expireClaimed(id, token, 'releasing'),
  // A purge of the topic cancels the scheduled messages sent before it.
  dropped: (d, topic) => gone(d, topic) || (topic.purgedAt !== undefined && d.record.sentAt <= topic.purgedAt),
  drop: async (d) => {
    await deferred.cancel(d.id, d.topic);
  },
});

/**
 * A claim whose half message's next check is further than this after the claim moves its
 * check-index entry to `sweepAfterMs` after the claim. The entry is what brings a finisher to a
 * claim its claimant left (a crash), and a finisher that comes within 60 s of the records' expiry
 * closes the claim without an append (claimed-release.ts): with the entry due ≤ 120 s after the
 * claim and the sweep every minute, one comes ≤ ~180 s after it, before the shortest retention's
 * 300 − 60 s. A commit soon after its send (the default check after 60 s) writes no index.
 */
export const COMMIT_CHECK_WITHIN_MS = 120_000;

/**
 * A half message's commit by `by`. A kept half message's claim (its entry is never due) and one
 * whose next check is past {@link COMMIT_CHECK_WITHIN_MS} move its check-index entry to
 * `sweepAfterMs` after the claim, where the check sweep finds it should its claimant crash.
 */
export const commitSteps = (deferred: DeferredStore, by: string, sweepAfterMs: number): ClaimSteps => ({
  claim: (d, claim, expect) =>
    deferred.claimCommit(d.id, claim, expect, {
      by,
      kept: d.transaction?.kept === true,
      moveCheck: (d.transaction?.nextCheckAt ?? Infinity) > claim.at + COMMIT_CHECK_WITHIN_MS,
      sweepAt: claim.at + sweepAfterMs,
      checkBy: claim.at + COMMIT_CHECK_WITHIN_MS,
    }),
  mark: (id, address, token) => deferred.markCommitted(id, address, token),
  close: (id, token) => deferred.markCommitted(id, undefined, token),
  expire: (id, token) => deferred.expireClaimed(id, token, 'committing'),
  // Half messages survive a purge (they were not deliverable before it).
  dropped: (d, topic) => gone(d, topic),
  drop: async () => {},
});
