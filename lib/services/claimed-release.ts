/**
 * Deferred messages enter standard partitions without a transaction
 * (docs/design.md, Scheduled and delayed messages: Release; Transactional
 * messages: Commit): claim each message's address on its deferred item, put
 * the segment there, mark the items appended. A crashed or raced append is
 * finished by whoever finds the claimed item ({@link ClaimedRelease.settle}).
 * What the claim, the mark and the close write depends on the kind of message
 * (claim-steps.ts: a scheduled message's release, a half message's commit);
 * the protocol below is the same for both.
 *
 * The rule that keeps it exactly-once: a message enters a stream only in the
 * segment put at the first seq its current claim names (`rf`), by a claimant
 * whose claim is younger than {@link CLAIM_GIVE_UP_MS} just before the put; a
 * finisher moves a claim elsewhere only when that slot can no longer take the
 * message — it holds another segment (an `attribute_not_exists` put there fails
 * while that segment lives, at least the 300 s minimum retention), or the
 * stream's head passed it empty and the claim is older than
 * {@link CLAIM_TAKEOVER_MS}; and never once the claimed records are within
 * {@link CLAIM_TAKEOVER_MS} of their expiry (from then on TTL may have removed
 * the segment put there: the claim is closed as `expired` instead). A finisher that finds the slot empty at the
 * stream's head re-claims the same slot and puts the message there itself: the
 * old claimant's put and its own race for one key, and either way the slot
 * holds the message once.
 */
import { randomBytes } from 'node:crypto';
import { ThrottledError } from '../domain/errors.js';
import type { Deferred } from '../adapters/dynamodb/deferred.js';
import type { ClaimSteps } from './claim-steps.js';
import { LostRaceError, StreamLog, type Segment } from '../adapters/dynamodb/stream-log.js';
import type { Clock } from '../ports/clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { Stores } from './stores.js';
import type { Outgoing, WritePlanner } from './write-planner.js';

/** A claimant does not put its segment once its claim (its clock before the claim) is this old. */
export const CLAIM_GIVE_UP_MS = 20_000;
/** A finisher moves an empty, passed slot's claim elsewhere only once the claim is this old (margin: clock skew, stalls). */
export const CLAIM_TAKEOVER_MS = 60_000;
/** Claim, put and mark attempts of one stream's messages before the call is answered "busy". */
const ATTEMPTS = 12;

/** A message left to the claim it has (young, or its slot undecided): the sweep looks again. */
export const LEFT = 'left' as const;

/** One message to release: routed, with the claim it takes over (none: it is still scheduled). */
export interface ClaimedAppend {
  deferred: Deferred;
  outgoing: Outgoing;
  /** The token of the claim it takes over. */
  token?: string | undefined;
  /** The slot of a claim taken over while that slot was empty at the stream's head: the message may land elsewhere only if the slot fills. */
  slot?: { stream: string; first: number } | undefined;
}

/** What a finisher does with a claimed (`releasing`, `committing`) item. */
export type Settled =
  | { kind: 'landed'; address: { stream: string; seq: number } }
  | { kind: 'adopt'; token: string; slot?: { stream: string; first: number } }
  | { kind: 'left' }
  /** The claimed records' expiry (less {@link CLAIM_TAKEOVER_MS}) passed with the slot not holding it: closed as `expired` (claim-steps.ts), never appended again. */
  | { kind: 'expired' };

/** Where each message went: an address, undefined (resolved meanwhile by someone else), or {@link LEFT}. */
export type ClaimedOutcome = Map<string, { stream: string; seq: number } | undefined | typeof LEFT>;

class ClaimsFailed extends Error {
  constructor(readonly gone: Set<string>) {
    super('release claims failed their condition');
  }
}
class ClaimTooOld extends Error {
  constructor() {
    super('release claim older than the give-up bound');
  }
}
class SlotsChanged extends Error {
  constructor(readonly landed: Map<string, { stream: string; seq: number }>, readonly left: Set<string>) {
    super('a taken-over slot changed');
  }
}

const newToken = () => randomBytes(6).toString('base64url');
const indexOf = (segment: Segment | undefined, messageId: string) => segment?.records.findIndex((r) => r.messageId === messageId) ?? -1;

export class ClaimedRelease {
  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly notifier: Notifier,
    private readonly planner: WritePlanner,
    /** What the claims, marks and closes write (claim-steps.ts). */
    readonly steps: ClaimSteps,
  ) {}

  /**
   * What to do with a claimed item found by a wake-up or a sweep: its
   * claimed slot holds the message → mark it appended (landed); the slot
   * holds another segment → take the claim over (adopt) and append anew; the
   * slot is empty at the stream's head and the claim older than the give-up
   * bound → take it over for that slot; empty and passed by the head, claim
   * older than {@link CLAIM_TAKEOVER_MS} → take it over; else leave it.
   */
  async settle(d: Deferred, now: number): Promise<Settled> {
    const claim = d.claim;
    if (!claim) return { kind: 'left' };
    // The head first: a slot read empty after it was read at the head is at the head or passed.
    const head = await this.stores.log.head(claim.stream);
    const [segment] = await this.stores.log.getSegments([{ stream: claim.stream, seq: claim.first }]);
    const j = indexOf(segment, d.record.messageId);
    if (segment && j >= 0) {
      const address = { stream: claim.stream, seq: segment.seq + j };
      await this.steps.mark(d.id, address, claim.token);
      return { kind: 'landed', address };
    }
    // Near or past the claimed records' expiry (TTL removes their segment from then on, and clocks
    // differ): an empty slot may be a segment that was put and removed, so appending again could
    // deliver the message twice, and a message this old is past its retention anyway. Closed as
    // expired: it was appended once (and removed) or never, and the item must not say otherwise.
    if (now >= claim.expiresAt - CLAIM_TAKEOVER_MS) {
      await this.steps.expire(d.id, claim.token);
      return { kind: 'expired' };
    }
    if (segment) return { kind: 'adopt', token: claim.token };
    const age = now - claim.at;
    if (StreamLog.nextAfter(head) === claim.first) {
      return age >= CLAIM_GIVE_UP_MS ? { kind: 'adopt', token: claim.token, slot: { stream: claim.stream, first: claim.first } } : { kind: 'left' };
    }
    return age >= CLAIM_TAKEOVER_MS ? { kind: 'adopt', token: claim.token } : { kind: 'left' };
  }

  /**
   * Appends messages of one standard stream together: claims their
   * addresses (one conditional update each), puts one segment, marks them
   * appended (one conditional update each). A lost append race re-claims
   * with the next address; a message found in the lost slot (a finisher put
   * it there) is marked where it is.
   */
  async append(stream: string, items: ClaimedAppend[]): Promise<ClaimedOutcome> {
    const out: ClaimedOutcome = new Map();
    let live = [...items]; // the items keep the tokens of their claims (a caller that retries them one by one takes the claims over)
    for (let attempt = 0; live.length > 0; attempt++) {
      if (attempt >= ATTEMPTS) {
        this.stores.log.reportThrottled([stream]);
        throw new ThrottledError('Too many concurrent writers on one stream; retry the request.');
      }
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(1000, 10 * 2 ** attempt)));
      const at = this.clock.now();
      const token = newToken();
      const { writes } = this.planner.writes(live.map((l) => l.outgoing), at, false, undefined);
      let first = 0;
      try {
        [first = 0] = await this.stores.log.appendMany(writes, undefined, {
          once: true,
          beforeWrite: async ([f = 0]) => {
            first = f;
            await this.checkSlots(live, stream, f);
            const claimed = await Promise.allSettled(
              live.map((l, j) => this.steps.claim(l.deferred, { stream, seq: f + j, first: f, token, at, expiresAt: at + l.outgoing.topic.retentionSeconds * 1000 }, l.token)),
            );
            const gone = new Set<string>();
            // Claims that took effect are remembered even when another claim failed: a retry takes them over.
            live.forEach((l, j) => {
              const result = claimed[j];
              if (result?.status === 'fulfilled' && result.value) l.token = token;
              else if (result?.status === 'fulfilled') gone.add(l.deferred.id);
            });
            const error = claimed.find((r): r is PromiseRejectedResult => r.status === 'rejected');
            if (error) throw error.reason;
            if (gone.size > 0) throw new ClaimsFailed(gone);
            if (this.clock.now() - at > CLAIM_GIVE_UP_MS) throw new ClaimTooOld();
          },
        });
      } catch (error) {
        if (error instanceof ClaimsFailed) {
          for (const id of error.gone) out.set(id, undefined); // resolved or taken over meanwhile
          live = live.filter((l) => !error.gone.has(l.deferred.id));
          continue; // the others hold claims of this attempt's addresses: re-claimed at the next
        }
        if (error instanceof SlotsChanged) {
          for (const [id, address] of error.landed) out.set(id, address);
          for (const id of error.left) out.set(id, LEFT);
          live = live.filter((l) => !error.landed.has(l.deferred.id) && !error.left.has(l.deferred.id));
          continue;
        }
        if (error instanceof ClaimTooOld) {
          for (const l of live) out.set(l.deferred.id, LEFT);
          return out;
        }
        if (!(error instanceof LostRaceError)) throw error;
        // The slot went to another writer — or to a finisher that put these messages there.
        const [segment] = await this.stores.log.getSegments([{ stream, seq: first }]);
        const found = new Set<string>();
        await Promise.all(
          live.map(async (l) => {
            const j = indexOf(segment, l.deferred.record.messageId);
            if (!segment || j < 0) return;
            const address = { stream, seq: segment.seq + j };
            if (l.token !== undefined) await this.steps.mark(l.deferred.id, address, l.token);
            out.set(l.deferred.id, address);
            found.add(l.deferred.id);
          }),
        );
        live = live.filter((l) => !found.has(l.deferred.id));
        continue;
      }
      // A false mark: a finisher took the claim over; it finds the message in this slot and marks it.
      await Promise.all(live.map((l, j) => this.steps.mark(l.deferred.id, { stream, seq: first + j }, token)));
      live.forEach((l, j) => out.set(l.deferred.id, { stream, seq: first + j }));
      for (const topic of new Set(live.map((l) => l.outgoing.topic.name))) this.notifier.notify(topic);
      live = [];
    }
    return out;
  }

  /**
   * Messages taken over from a claim whose slot was empty at the stream's head
   * may go to another slot only if that slot filled meanwhile with another
   * segment; if it holds the message, it is marked there; if it is still empty
   * (the head passed it), they are left to the old claim.
   */
  private async checkSlots(live: ClaimedAppend[], stream: string, first: number): Promise<void> {
    const moved = live.filter((l) => l.slot && (l.slot.stream !== stream || l.slot.first !== first));
    if (moved.length === 0) return;
    const segments = await this.stores.log.getSegments(moved.map((l) => ({ stream: l.slot!.stream, seq: l.slot!.first })));
    const landed = new Map<string, { stream: string; seq: number }>();
    const left = new Set<string>();
    for (const l of moved) {
      const segment = segments.find((s) => s.stream === l.slot!.stream && s.seq === l.slot!.first);
      const j = indexOf(segment, l.deferred.record.messageId);
      if (!segment) left.add(l.deferred.id);
      else if (j >= 0) {
        const address = { stream: segment.stream, seq: segment.seq + j };
        if (l.token !== undefined) await this.steps.mark(l.deferred.id, address, l.token);
        landed.set(l.deferred.id, address);
      } else l.slot = undefined; // fenced by another segment: free to land anywhere
    }
    if (landed.size > 0 || left.size > 0) throw new SlotsChanged(landed, left);
  }
}
