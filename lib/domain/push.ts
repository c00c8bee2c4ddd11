/**
 * Push groups (SPEC §1 "Pull and push", §3.1, §3.9): a consumer group whose
 * receiver is Sluice itself. Its `push` settings name the target — an HTTPS
 * endpoint, or (AWS only) a Lambda function the deployment allows — and how
 * much it is sent at once. Pure: ranges, defaults and the shape of a target.
 */
import { InvalidArgumentError, type FieldIssue } from './errors.js';

/** Where a push group's messages go: exactly one of a URL or a Lambda function ARN. */
export type PushTarget = { url: string; lambdaArn?: undefined } | { lambdaArn: string; url?: undefined };

export interface PushSettings {
  target: PushTarget;
  /** Messages per request (1–100). */
  batchSize: number;
  /** How long a request may take before it counts as failed (s, 1–30). */
  timeoutSeconds: number;
  /** The group's requests in flight at once (1–100). */
  maxConcurrency: number;
}

/** What a PUT/PATCH gives (fields left out take their defaults). */
export interface PushInput {
  url?: string | undefined;
  lambdaArn?: string | undefined;
  batchSize?: number | undefined;
  timeoutSeconds?: number | undefined;
  maxConcurrency?: number | undefined;
}

/**
 * SPEC §3.1 ranges and defaults. `maxConcurrencyMax` is ours: one push worker
 * invocation holds at most this many requests of a group, and 100 keeps a
 * worker's sockets and memory bounded (docs/design.md, Push groups).
 */
export const PushLimits = {
  batchSizeMin: 1,
  batchSizeMax: 100,
  batchSizeDefault: 1,
  timeoutSecondsMin: 1,
  timeoutSecondsMax: 30,
  timeoutSecondsDefault: 10,
  maxConcurrencyMin: 1,
  maxConcurrencyMax: 100,
  maxConcurrencyDefault: 10,
  /**
   * Push groups one topic can have. The topic item names them (`pg`, a string
   * set) and DynamoDB bills and bounds an item by all its bytes: 1,000 names
   * of at most 128 ASCII characters (NAME_PATTERN) are ≤ 128,000 bytes, and
   * the rest of a topic item is ≤ ~14 KB (name and order group ≤ 128 B each;
   * `gs` and `pw` ≤ `Limits.partitionsMax` = 256 numbers of ≤ 21 B + 1 B each,
   * ≤ 11,264 B together; a dozen small numbers), so the item stays
   * ≤ ~142 KB without its doorbell map; `wb` adds ≤ 150,000 bytes
   * (`DoorbellLimits.parkedGroupsPerTopicMax`,
   * lib/domain/doorbell-limits.ts): ≤ ~292 KB, under the 400 KB item limit
   * (docs/design.md, Limits by construction).
   */
  pushGroupsPerTopicMax: 1000,
  /** Last attempts kept per group for GET /v1/groups/{g} (`push.lastAttempts`). */
  lastAttemptsKept: 10,
  urlMaxLength: 2048,
} as const;

/** A Lambda function ARN (optionally with a version or alias qualifier). */
export const LAMBDA_ARN_PATTERN = /^arn:aws[a-zA-Z-]*:lambda:[a-z0-9-]+:\d{12}:function:[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9$_-]{1,128})?$/;

const inRange = (issues: FieldIssue[], field: string, value: number, min: number, max: number) => {
  if (!Number.isInteger(value) || value < min || value > max) issues.push({ path: `push/${field}`, message: `must be an integer from ${min} to ${max}` });
};

/**
 * The settings a save writes: defaults for what is not given, checked against
 * the ranges (the edge checks each field too). The target's reachability
 * (SSRF guard, allowed functions) is checked by the admin service.
 */
export function resolvePush(input: PushInput): PushSettings {
  const issues: FieldIssue[] = [];
  const hasUrl = input.url !== undefined;
  const hasArn = input.lambdaArn !== undefined;
  if (hasUrl === hasArn) issues.push({ path: 'push', message: 'must give exactly one of url and lambdaArn' });
  if (hasArn && !LAMBDA_ARN_PATTERN.test(input.lambdaArn ?? '')) issues.push({ path: 'push/lambdaArn', message: 'must be a Lambda function ARN' });
  const settings: PushSettings = {
    target: hasArn ? { lambdaArn: input.lambdaArn ?? '' } : { url: input.url ?? '' },
    batchSize: input.batchSize ?? PushLimits.batchSizeDefault,
    timeoutSeconds: input.timeoutSeconds ?? PushLimits.timeoutSecondsDefault,
    maxConcurrency: input.maxConcurrency ?? PushLimits.maxConcurrencyDefault,
  };
  inRange(issues, 'batchSize', settings.batchSize, PushLimits.batchSizeMin, PushLimits.batchSizeMax);
  inRange(issues, 'timeoutSeconds', settings.timeoutSeconds, PushLimits.timeoutSecondsMin, PushLimits.timeoutSecondsMax);
  inRange(issues, 'maxConcurrency', settings.maxConcurrency, PushLimits.maxConcurrencyMin, PushLimits.maxConcurrencyMax);
  if (issues.length > 0) throw new InvalidArgumentError(`Invalid push: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}.`, { issues });
  return settings;
}

/** The API's view of push settings. */
export const pushView = (push: PushSettings) => ({
  ...(push.target.url !== undefined ? { url: push.target.url } : { lambdaArn: push.target.lambdaArn }),
  batchSize: push.batchSize,
  timeoutSeconds: push.timeoutSeconds,
  maxConcurrency: push.maxConcurrency,
});

/**
 * How each subscribed topic's push-subscription count (`pu` on the topic
 * item) changes when a group's push-subscribed topics go from `before` to
 * `after` (a pull group has none): +1 for each topic added, −1 for each removed.
 */
export function pushCountChanges(before: readonly string[], after: readonly string[]): Map<string, number> {
  const changes = new Map<string, number>();
  for (const topic of new Set(after)) if (!before.includes(topic)) changes.set(topic, 1);
  for (const topic of new Set(before)) if (!after.includes(topic)) changes.set(topic, -1);
  return changes;
}
