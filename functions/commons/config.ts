/** Configuration, read once per container from the environment and validated. */
import { z } from 'zod';

const ConfigSchema = z.object({
  SLUICE_TABLE_NAME: z.string().min(3).max(255),
  DYNAMODB_ENDPOINT: z.url().optional(),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  /** `in-process` in the local runtime: long polls wake on sends in the same process. */
  SLUICE_NOTIFIER: z.enum(['polling', 'in-process']).default('polling'),
  SLUICE_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(5000).default(250),
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
