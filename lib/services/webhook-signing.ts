/**
 * Signing secrets of the webhooks Sluice calls — producers' checkers (SPEC §4)
 * and push groups' endpoints (SPEC §3.9) — in the Standard Webhooks format:
 * a `whsec_` secret, and `webhook-id` / `webhook-timestamp` /
 * `webhook-signature` headers. After a rotation the previous secret signs
 * next to the new one (a space-separated second signature) until it expires.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { SealedSecret } from '../domain/model.js';
import type { SecretBox } from '../ports/webhooks.js';

/** A new Standard Webhooks secret (32 random bytes). */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** The secrets that sign at `now`: the current one, and the previous one while its grace lasts. */
export async function openSigningSecrets(
  box: SecretBox,
  secret: SealedSecret,
  context: Record<string, string>,
  now: number,
): Promise<string[]> {
  const out = [await box.open(secret.sealed, context)];
  if (secret.previous !== undefined && (secret.previousUntil ?? 0) > now) out.push(await box.open(secret.previous, context));
  return out;
}

/** The Standard Webhooks headers of one call, signed with every secret given. */
export function signedHeaders(secrets: readonly string[], webhookId: string, now: number, payload: string, userAgent: string): Record<string, string> {
  const timestamp = new Date(now);
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(now / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(webhookId, timestamp, payload)).join(' '),
    'user-agent': userAgent,
  };
}
