/**
 * Planning a receive on one stream: which leases to renew, which messages to
 * lease for the first time, which to dead-letter or close — according to the
 * group's delivery mode. Pure: the caller reads the cursor and the segments,
 * and writes the plan with one conditional update (docs/design.md, Receive).
 */
import { MAX_IN_FLIGHT_PER_STREAM, expiredLeases, leaseToken, completionEpoch, type CursorState, type DoneEntry, type Lease } from './cursor.js';
import { hintedToken } from './readiness.js';
import type { DeliveryMode, MessageRecord } from './model.js';
import { retryDelayMs, type RetryPolicy } from './retry-policy.js';

/** `unordered`: standard topics (every group delivers them concurrently, without order). */
export type ClaimMode = DeliveryMode | 'unordered';

/** What to do with the next record of a stream: deliver it, pass over it for good, or stop here. */
export type Verdict = 'deliver' | 'skip' | 'stop';

export interface SegmentView {
  seq: number;
  count: number;
  records: MessageRecord[];
}

export interface PlanInput {
  cursor: CursorState;
  mode: ClaimMode;
  now: number;
  want: number;
  visibilityMs: number;
  maxDeliveries: number;
  /**
   * The group's back-off: a lease is granted until `now + visibility + retry delay of its delivery`,
   * so a lease that expires is claimable again only once the delay after its expiry has passed.
   */
  retryPolicy: RetryPolicy;
  /**
   * Records of the leases that expired (by sequence number), read oldest first: an entry whose
   * record is undefined was removed (its segment is gone); the plan stops at the first expired lease
   * with no entry (not read this time: it and everything after it wait for the next claim).
   */
  leaseRecords: Map<number, MessageRecord | undefined>;
  /** Segments read from `cursor.segmentStart` on. */
  segments: SegmentView[];
  /** True when `segments` may not reach the end of the stream (the read hit its limit). */
  truncated: boolean;
  /**
   * A sequenced stream: `segments` stop below a hole a writer may still fill (lib/domain/gaps.ts);
   * when the plan gets that far, the stream has work again at this time (ms), not before.
   */
  heldUntil?: number | undefined;
  /** Whether a record is still deliverable at all (not expired, current generation, subscribed topic). */
  live: (record: MessageRecord) => boolean;
  /** Tag filters and the receive's own topic filter. */
  verdict: (record: MessageRecord) => Verdict;
  token: () => string;
  /**
   * Asked before each lease the plan would grant (a renewal or a first
   * delivery), in plan order, with the delivery as it would be answered: false
   * ends the plan there and the message stays claimable at once (a renewal stays
   * expired, a new message stays at `next`). The receive's answer budget.
   */
  admit?: (delivery: Delivery) => boolean;
}

export interface Delivery {
  record: MessageRecord;
  lease: Lease;
}

export interface Plan {
  deliveries: Delivery[];
  /** New leases, and renewals with the lease (as read) each replaces. */
  grant: Array<{ lease: Lease; replaces: Lease | undefined }>;
  close: Array<{ done: DoneEntry; replaces: Lease }>;
  dead: Array<{ lease: Lease; record: MessageRecord }>;
  next: number;
  segmentStart: number;
  /** Highest sequence number seen (FIFO cursors keep it as their known head). */
  seen: number;
  /** When this stream next has claimable work for the group (undefined: idle until a new notice). */
  readyAt: number | undefined;
}

const done = (lease: Lease, at: number, outcome: DoneEntry['outcome']): DoneEntry => ({
  seq: lease.seq,
  token: lease.token,
  at,
  outcome,
  deliveries: lease.deliveries,
  ...completionEpoch(lease.token),
});

/**
 * The lowest lease its holder released (visibility 0) that still waits out its back-off; on an
 * ordered stream nothing after it moves until it is delivered again.
 */
const waitingRelease = (cursor: CursorState, now: number): Lease | undefined =>
  [...cursor.leases.values()].filter((l) => l.released === true && !l.pending && l.expiresAt > now).sort((a, b) => a.seq - b.seq)[0];

export function planClaims(input: PlanInput): Plan {
  const { cursor, mode, now, visibilityMs } = input;
  const plan: Plan = {
    deliveries: [],
    grant: [],
    close: [],
    dead: [],
    next: cursor.next,
    segmentStart: cursor.segmentStart,
    seen: Math.max(cursor.known ?? 0, cursor.next - 1),
    readyAt: undefined,
  };
  const ordered = mode !== 'unordered';
  // A lease holds until its visibility ends plus the back-off its failure would earn: its expiry is
  // the moment it is claimable again (docs/design.md, Retry policy). The last delivery earns none.
  const heldFor = (deliveries: number) => visibilityMs + retryDelayMs(input.retryPolicy, deliveries, input.maxDeliveries);
  // Ordered streams: a message its holder released waits out its back-off, and its shard waits with
  // it — nothing after it is delivered (new, or again) before it is.
  const waiting = ordered ? waitingRelease(cursor, now) : undefined;
  let inFlight = cursor.leases.size;
  const admit = input.admit ?? (() => true);
  /** The answer budget refused a delivery, or an expired lease was not read: nothing after it is leased either. */
  let full = false;

  // 1. Expired leases first, oldest message first: a redelivered message keeps its place.
  for (const lease of expiredLeases(cursor, now)) {
    if (plan.deliveries.length >= input.want || (waiting && lease.seq > waiting.seq)) break;
    if (!input.leaseRecords.has(lease.seq)) {
      // Not read (the claim read expired leases up to what its answer can hold): neither it nor
      // anything after it is leased now — a redelivered message keeps its place.
      full = true;
      break;
    }
    const record = input.leaseRecords.get(lease.seq);
    if (record === undefined || !input.live(record)) {
      plan.close.push({ done: done(lease, now, 'expired'), replaces: lease });
      inFlight--;
    } else if (lease.deliveries >= input.maxDeliveries) {
      plan.dead.push({ lease, record });
    } else {
      // A new lease: no visibility change has touched it (`released` belonged to the one it replaces).
      const { released: _released, ...held } = lease;
      const renewed: Lease = {
        ...held,
        deliveries: lease.deliveries + 1,
        token: leaseToken(lease.deliveries + 1, input.token(), cursor.seekEpoch),
        expiresAt: now + heldFor(lease.deliveries + 1),
      };
      if (!admit({ record, lease: renewed })) {
        full = true;
        break;
      }
      plan.grant.push({ lease: renewed, replaces: lease });
      plan.deliveries.push({ record, lease: renewed });
    }
  }

  // 2. Then messages never delivered to this group.
  const blocked = () =>
    waiting !== undefined || (mode === 'serialized' ? inFlight > 0 || plan.dead.length > 0 : inFlight >= MAX_IN_FLIGHT_PER_STREAM);
  let more = full;
  outer: for (const segment of full ? [] : input.segments) {
    const end = segment.seq + segment.count;
    plan.seen = Math.max(plan.seen, end - 1);
    if (end <= plan.next) continue;
    if (segment.seq > plan.next) plan.next = segment.seq; // a new epoch, or expired segments removed
    for (let seq = plan.next; seq < end; seq++) {
      const record = segment.records[seq - segment.seq];
      if (plan.deliveries.length >= input.want || blocked()) {
        more = true;
        break outer;
      }
      const verdict = record === undefined || !input.live(record) ? 'skip' : input.verdict(record);
      if (verdict === 'stop') {
        // Ordered streams never skip ahead of a message this receive may not take.
        if (ordered) {
          more = true;
          break outer;
        }
        continue;
      }
      const lease: Lease | undefined =
        verdict === 'skip' || record === undefined
          ? undefined
          : {
              seq,
              expiresAt: now + heldFor(1),
              token: leaseToken(1, input.token(), cursor.seekEpoch),
              deliveries: 1,
              segment: segment.seq,
              topic: record.topic,
              pending: false,
            };
      if (lease && record && !admit({ record, lease })) {
        more = true;
        break outer;
      }
      plan.next = seq + 1;
      plan.segmentStart = plan.next < end ? segment.seq : plan.next;
      if (!lease || !record) continue;
      plan.grant.push({ lease, replaces: undefined });
      plan.deliveries.push({ record, lease });
      inFlight++;
    }
  }
  // The plan went as far as the read let it, up to a hole held: nothing past it before `heldUntil`
  // (the notices' known head is past the hole, but that is not work now).
  const held = input.heldUntil !== undefined && !more;
  if (!held && (input.truncated || plan.seen >= plan.next)) more = true;

  // 3. When is there work here next?
  const leaseExpiries = [...cursor.leases.values()]
    .filter((l) => !l.pending && !plan.grant.some((g) => g.lease.seq === l.seq) && !plan.close.some((c) => c.done.seq === l.seq))
    // A lease held back behind a waiting release is claimable when that one is, not before.
    .map((l) => (waiting && l.seq > waiting.seq ? Math.max(l.expiresAt, waiting.expiresAt) : l.expiresAt))
    .concat(plan.grant.map((g) => g.lease.expiresAt));
  const earliestExpiry = leaseExpiries.length ? Math.min(...leaseExpiries) : undefined;
  // The lowest lease the claim leaves: one it closes (expired, its message gone) no longer blocks a
  // pending commit above it, which a receive must then cascade (ready now).
  const lowest = [...cursor.leases.values()].filter((l) => !plan.close.some((c) => c.done.seq === l.seq)).sort((a, b) => a.seq - b.seq)[0];
  if (plan.dead.length > 0 || lowest?.pending) plan.readyAt = now;
  else if (more && !blocked()) plan.readyAt = now;
  else if (held) plan.readyAt = Math.min(earliestExpiry ?? Infinity, input.heldUntil ?? Infinity);
  else plan.readyAt = earliestExpiry;

  // 4. FIFO: tell each lease's commit what it will most likely do to the ready index (a guess the
  //    commit proves with conditions): with more work here the shard stays (or becomes) ready;
  //    drained, the commit of the highest lease takes it off the index, the others leave it alone.
  if (ordered && plan.grant.length > 0) {
    const drained = !more && plan.readyAt !== undefined && plan.readyAt > now;
    const highest = Math.max(...plan.grant.map((g) => g.lease.seq));
    for (const { lease } of plan.grant) {
      // Below a held hole the ready-index entry waits for the hole: commits leave it alone.
      lease.token = hintedToken(lease.token, held ? 'keep' : !drained ? 'ready' : lease.seq === highest ? 'drop' : 'keep');
    }
  }
  return plan;
}
