/** Configuration, read once per container from the environment and validated. */
import { z } from 'zod';

const ConfigSchema = z
  .object({
  SLUICE_TABLE_NAME: z.string().min(3).max(255),
  DYNAMODB_ENDPOINT: z.url().optional(),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  /**
   * How a long poll waits between looks. `in-process` (the local runtime): sends in the
   * same process wake it. `activity` (AWS): it parks on its topics and reads their
   * `A#<topic>` items with back-off, looking for real every 5 s (lib/services/activity-waiter.ts).
   * `polling`: it looks for real every SLUICE_POLL_INTERVAL_MS.
   */
  SLUICE_NOTIFIER: z.enum(['polling', 'in-process', 'activity']).default('polling'),
  SLUICE_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(5000).default(250),
  /**
   * How long a container reuses a topic or group item on the data plane
   * (send, receive, commit) before reading it again; 0 reads every time.
   * A deleted topic can be re-created after twice this time.
   */
  SLUICE_CATALOG_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  /**
   * How long a container's receives use the partition cursors it last read or wrote instead of
   * reading them (docs/design.md, the cursor cache); 0 reads every time.
   */
  SLUICE_CURSOR_CACHE_MS: z.coerce.number().int().min(0).max(10_000).default(2000),
  /**
   * `on`: a segment of ≥ 2 records is written packed (`mz`) when smaller (docs/design.md, Segment
   * compression); `off`: written per record only. Every version reads both; `off` is the first step of
   * an upgrade from a version that cannot read `mz` (README, "Upgrading"), and of a rollback to one.
   */
  SLUICE_PACK_SEGMENTS: z.enum(['on', 'off']).default('on'),
  /** `aws`: EventBridge Scheduler + SQS; `local`: in-process timers (the local runtime). */
  SLUICE_TIMERS: z.enum(['aws', 'local']).default('local'),
  SLUICE_SCHEDULE_GROUP: z.string().min(1).optional(),
  SLUICE_SCHEDULER_ROLE_ARN: z.string().min(1).optional(),
  SLUICE_TIMER_FUNCTION_ARN: z.string().min(1).optional(),
  SLUICE_DELAY_QUEUE_URL: z.url().optional(),
  /** Check-back fan-out queue (AWS); without it checks run in-process. */
  SLUICE_CHECK_QUEUE_URL: z.url().optional(),
  SLUICE_CHECK_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5000),
  /** Local runtime: checker URLs may be http on loopback. */
  SLUICE_ALLOW_LOOPBACK_CHECKERS: z.enum(['true', 'false']).default('false'),
  /**
   * AWS: the Lambda functions push groups may target (comma-separated ARNs,
   * from the construct's `pushTargets`); empty: none. The local runtime
   * (SLUICE_TIMERS=local) refuses every `lambdaArn`.
   */
  SLUICE_PUSH_LAMBDA_ARNS: z.string().max(20_000).default(''),
  /**
   * AWS: the deployment's name prefix; pull groups' doorbell queues are `<prefix>-bell-<hash>`
   * (docs/design.md, "Waking SDK consumers"). Without it the doorbells are in-process (the local runtime).
   */
  SLUICE_DOORBELL_PREFIX: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/).optional(),
  /** The push queue (AWS); without it push jobs run in-process (the local runtime). */
  SLUICE_PUSH_QUEUE_URL: z.url().optional(),
  /** Seals producer signing secrets with KMS (AWS). */
  SLUICE_KMS_KEY_ID: z.string().min(1).optional(),
  /** Or with this AES-256 key (base64, 32 bytes; the local runtime keeps one under .data/). */
  SLUICE_SECRETS_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64')
    .optional(),
  })
  .superRefine((config, ctx) => {
    if (config.SLUICE_TIMERS !== 'aws') return;
    for (const key of ['SLUICE_SCHEDULE_GROUP', 'SLUICE_SCHEDULER_ROLE_ARN', 'SLUICE_TIMER_FUNCTION_ARN', 'SLUICE_DELAY_QUEUE_URL'] as const) {
      if (!config[key]) ctx.addIssue({ code: 'custom', path: [key], message: 'required when SLUICE_TIMERS=aws' });
    }
  });

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid Sluice configuration: ${problems}`);
  }
  return parsed.data;
}
