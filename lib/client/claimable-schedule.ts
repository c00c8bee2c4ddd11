/**
 * When a parked Consumer must receive for real because a message it knows of
 * becomes claimable again without a send, so no doorbell rings for it
 * (docs/design.md, "Waking SDK consumers"): the end of a release's retry
 * back-off, and the end of a lease it holds (should it end uncommitted).
 *
 * A time counts until a receive starts at or after it: that receive finds
 * what became claimable, so a lease end already past does not make the
 * consumer receive over and over.
 */
import type { RetryPolicy } from './types.js';

/** Added to every time: the server's clock reads these times, the client's only estimates them (from when an answer arrived). */
export const CLAIMABLE_MARGIN_MS = 250;

/**
 * The retry back-off after a message's `deliveries`-th delivery failed (ms),
 * as the server applies it (lib/domain/retry-policy.ts; the client package
 * cannot import it): `min(maxSeconds, initialSeconds × multiplier^(deliveries − 1))`;
 * undefined for the last delivery the group allows (dead-lettered, never claimable again).
 */
export function retryBackoffMs(policy: RetryPolicy, deliveries: number, maxDeliveries: number): number | undefined {
  if (deliveries >= maxDeliveries) return undefined;
  if (policy.initialSeconds === 0) return 0;
  return Math.round(Math.min(policy.maxSeconds, policy.initialSeconds * policy.multiplier ** Math.max(0, deliveries - 1)) * 1000);
}

export class ClaimableSchedule {
  /** One-off times: released messages' back-off ends, leases that ended without a commit. */
  private times: number[] = [];
  /** Lease ends of held messages, by receipt handle. */
  private readonly leases = new Map<string, number>();
  private lastReceiveAt = Number.NEGATIVE_INFINITY;

  /** @param onEarlier told when a time earlier than the previous {@link next} was added (a wait may end sooner). */
  constructor(private readonly onEarlier: () => void = () => undefined) {}

  /** A receive starts now (`at`): every time up to `at` is seen to. */
  received(at: number): void {
    this.lastReceiveAt = at;
    this.times = this.times.filter((t) => t > at);
  }

  /** Something becomes claimable at `at` (client clock). */
  add(at: number): void {
    const before = this.next();
    this.times.push(at + CLAIMABLE_MARGIN_MS);
    this.tell(before);
  }

  /** A held message's lease now ends at `endsAt` (received or extended). */
  lease(receiptHandle: string, endsAt: number): void {
    const before = this.next();
    this.leases.set(receiptHandle, endsAt + CLAIMABLE_MARGIN_MS);
    this.tell(before);
  }

  /** The message was committed: its lease end no longer matters. */
  drop(receiptHandle: string): void {
    this.leases.delete(receiptHandle);
  }

  /** The consumer let go of the message uncommitted (a commit failed): it becomes claimable when its lease ends. */
  expire(receiptHandle: string): void {
    const endsAt = this.leases.get(receiptHandle);
    this.leases.delete(receiptHandle);
    if (endsAt !== undefined && endsAt > this.lastReceiveAt) this.times.push(endsAt);
  }

  /** The earliest time not yet seen to by a receive, if any. */
  next(): number | undefined {
    let first = Number.POSITIVE_INFINITY;
    for (const t of this.times) if (t < first) first = t;
    for (const t of this.leases.values()) if (t > this.lastReceiveAt && t < first) first = t;
    return first === Number.POSITIVE_INFINITY ? undefined : first;
  }

  private tell(before: number | undefined) {
    const after = this.next();
    if (after !== undefined && (before === undefined || after < before)) this.onEarlier();
  }
}
