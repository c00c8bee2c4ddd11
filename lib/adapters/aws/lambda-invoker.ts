/**
 * Push to a Lambda function target: one synchronous `Invoke`
 * (`RequestResponse`) with the push request's JSON as the event. A function
 * error (`FunctionError` in the answer) or no answer within the group's
 * `timeoutSeconds` rejects, so the attempt fails and is retried per the retry
 * policy (SPEC §3.9). The function's result is read like an endpoint's answer
 * body, at most {@link MAX_ANSWER_BYTES} of it (the same bound as the webhook
 * client's).
 */
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { LambdaInvoker } from '../../ports/lambda-invoker.js';
import type { WebhookResponse } from '../../ports/webhooks.js';

export const MAX_ANSWER_BYTES = 1024 * 1024;

export class AwsLambdaInvoker implements LambdaInvoker {
  constructor(private readonly client: Pick<LambdaClient, 'send'>) {}

  async invoke(functionArn: string, payload: string, timeoutMs: number): Promise<WebhookResponse> {
    // The abort signal ends the HTTP call; the race ends the wait even where the signal is not observed.
    const deadline = new AbortController();
    const timedOut = new Promise<never>((_, reject) => {
      deadline.signal.addEventListener('abort', () => reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' })));
    });
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    let answer;
    try {
      answer = await Promise.race([
        this.client.send(new InvokeCommand({ FunctionName: functionArn, InvocationType: 'RequestResponse', Payload: new TextEncoder().encode(payload) }), {
          abortSignal: deadline.signal,
        }),
        timedOut,
      ]);
    } finally {
      clearTimeout(timer);
    }
    const bytes = answer.Payload ?? new Uint8Array();
    const body = new TextDecoder().decode(bytes.subarray(0, MAX_ANSWER_BYTES));
    if (answer.FunctionError !== undefined) {
      // The result of a failed invocation is the error object ({errorType, errorMessage}); keep it short in logs.
      throw new Error(`the function failed (${answer.FunctionError}): ${body.slice(0, 200)}`);
    }
    return { status: answer.StatusCode ?? 200, body, ...(bytes.length > MAX_ANSWER_BYTES ? { truncated: true } : {}) };
  }
}
