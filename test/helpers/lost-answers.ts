/**
 * Loses the answer of a call after it landed, as a socket timeout or a reset would: below the
 * SDK's retry step, the matching call is sent, and then a retryable TimeoutError is thrown instead
 * of its answer (once), so the SDK sends it again. What the reliability fault suite injects at
 * random, for one call.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface LostAnswers {
  /** Matching calls sent (retries included). */
  sent: number;
  /** Answers lost (at most 1). */
  lost: number;
}

/** Calls as the low-level client sees them (marshalled input, the request about to be sent). */
export type CallMatch = (command: string, input: Record<string, any>, request: { body?: unknown }) => boolean;

export function loseNextAnswer(client: DynamoDBClient, matches: CallMatch, name = 'loseNextAnswer'): LostAnswers {
  const seen: LostAnswers = { sent: 0, lost: 0 };
  let armed = true;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!matches(String(context.commandName), args.input as Record<string, any>, args.request as { body?: unknown })) return next(args);
      seen.sent++;
      const result = await next(args);
      if (!armed) return result;
      armed = false;
      seen.lost++;
      throw Object.assign(new Error('injected: answer lost after the write'), { name: 'TimeoutError' });
    },
    { step: 'finalizeRequest', priority: 'low', name },
  );
  return seen;
}
