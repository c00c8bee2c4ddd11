/**
 * A consumer group's retry policy (SPEC §1 "Retry policy"): after a failed
 * attempt — a lease that expired, or one its holder released — the message is
 * delivered again only after `min(maxSeconds, initialSeconds × multiplier^(deliveryCount − 1))`,
 * like RocketMQ's retry levels. Pure; the claim and the visibility change turn
 * the delay into the lease's expiry (docs/design.md, Retry policy).
 */
import { InvalidArgumentError } from './errors.js';

export interface RetryPolicy {
  /** Delay after the first failed attempt (s, 0–3600; 0: delivered again at once). */
  initialSeconds: number;
  /** Each further failed attempt multiplies the delay by this (1–10). */
  multiplier: number;
  /** The delay never grows beyond this (s, initialSeconds–43200). */
  maxSeconds: number;
}

/** SPEC §1: 1 s, ×2, at most 600 s. Groups saved before retry policies existed read as this. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ initialSeconds: 1, multiplier: 2, maxSeconds: 600 });

/** SPEC §3.1 ranges. */
export const RetryLimits = {
  initialSecondsMax: 3600,
  multiplierMin: 1,
  multiplierMax: 10,
  maxSecondsMax: 43_200,
} as const;

/**
 * How long (ms) a message waits after its `deliveries`-th delivery failed.
 * The last delivery a group allows (`deliveries >= maxDeliveries`) waits for
 * nothing: it is dead-lettered, not delivered again.
 */
export function retryDelayMs(policy: RetryPolicy, deliveries: number, maxDeliveries: number): number {
  if (deliveries >= maxDeliveries || policy.initialSeconds === 0) return 0;
  // multiplier^(d−1) overflows to Infinity for large d: min() then caps it.
  const seconds = Math.min(policy.maxSeconds, policy.initialSeconds * policy.multiplier ** Math.max(0, deliveries - 1));
  return Math.round(seconds * 1000);
}

/**
 * The policy a save writes: `given` fields over `base`, checked against the
 * ranges (the edge checks each field; this also checks what only the merged
 * policy shows, `maxSeconds` below `initialSeconds`).
 */
export function resolveRetryPolicy(given: Partial<RetryPolicy> | undefined, base: RetryPolicy = DEFAULT_RETRY_POLICY): RetryPolicy {
  const policy: RetryPolicy = {
    initialSeconds: given?.initialSeconds ?? base.initialSeconds,
    multiplier: given?.multiplier ?? base.multiplier,
    maxSeconds: given?.maxSeconds ?? base.maxSeconds,
  };
  const issues: Array<{ path: string; message: string }> = [];
  const { initialSeconds, multiplier, maxSeconds } = policy;
  if (!Number.isInteger(initialSeconds) || initialSeconds < 0 || initialSeconds > RetryLimits.initialSecondsMax) {
    issues.push({ path: 'retryPolicy/initialSeconds', message: `must be an integer from 0 to ${RetryLimits.initialSecondsMax}` });
  }
  if (!Number.isFinite(multiplier) || multiplier < RetryLimits.multiplierMin || multiplier > RetryLimits.multiplierMax) {
    issues.push({ path: 'retryPolicy/multiplier', message: `must be from ${RetryLimits.multiplierMin} to ${RetryLimits.multiplierMax}` });
  }
  if (!Number.isInteger(maxSeconds) || maxSeconds > RetryLimits.maxSecondsMax) {
    issues.push({ path: 'retryPolicy/maxSeconds', message: `must be an integer up to ${RetryLimits.maxSecondsMax}` });
  } else if (maxSeconds < initialSeconds) {
    issues.push({ path: 'retryPolicy/maxSeconds', message: `must be at least initialSeconds (${initialSeconds})` });
  }
  if (issues.length > 0) {
    throw new InvalidArgumentError(`Invalid retryPolicy: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}.`, { issues });
  }
  return policy;
}
