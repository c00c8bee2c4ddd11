/**
 * Invokes a push group's Lambda function target synchronously (AWS only):
 * the function gets the push request's JSON and its return value is the
 * answer (`{ "retry": [messageId…] }` or anything else for "all done").
 */
import type { WebhookResponse } from './webhooks.js';

export interface LambdaInvoker {
  /** Resolves to the answer (status 200 and the function's result); a function error or a time-out rejects. */
  invoke(functionArn: string, payload: string, timeoutMs: number): Promise<WebhookResponse>;
}
