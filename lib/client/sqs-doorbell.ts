/**
 * Waiting on a pull group's SQS doorbell (docs/design.md, "Waking SDK
 * consumers"): one ReceiveMessage long poll (20 s) with the consumer's own AWS
 * credentials, and a DeleteMessageBatch of the rings it got. SQS's JSON
 * protocol over `fetch`, signed with the SDK's SigV4 signer (service `sqs`),
 * so `@sluice/client` needs no `@aws-sdk/client-sqs`.
 */
import { SluiceClientError, SluiceConfigurationError } from './errors.js';
import { SigV4Signer, type AwsCredentials, type AwsCredentialsProvider } from './sigv4.js';

/** SQS's longest long poll (s). */
export const DOORBELL_WAIT_SECONDS = 20;

export interface SqsDoorbellOptions {
  /** Default: read from the queue URL (`https://sqs.<region>.amazonaws.com/…`). */
  region?: string | undefined;
  credentials: AwsCredentials | AwsCredentialsProvider;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
}

/** `sqs.<region>.amazonaws.com` (and the legacy `<region>.queue.amazonaws.com`). */
const SQS_HOST = /^(?:sqs\.([a-z0-9-]+)|([a-z0-9-]+)\.queue)\.amazonaws\.com(?:\.cn)?$/;

/**
 * Error types by which SQS (or the AWS auth layer in front of it) says the caller may not do this:
 * retrying the same credentials will not help. QueueDoesNotExist is not among them, although SQS also
 * answers it for a queue the caller may not access (SQS Developer Guide, "Troubleshoot Amazon SQS API
 * errors"): it is what a deleted-and-recreated doorbell answers too, which the next receive repairs.
 */
const DENIED = /AccessDenied|InvalidClientTokenId|SignatureDoesNotMatch|UnrecognizedClient|InvalidSecurity|MissingAuthenticationToken|IncompleteSignature|NotAuthorized|KmsAccessDenied/;

/** Error types by which SQS says the queue does not exist. */
const MISSING = /QueueDoesNotExist|NonExistentQueue/;

/** A doorbell call failed: SQS answered an error (`status`, `code`), or could not be reached (`status` undefined). */
export class SqsDoorbellError extends SluiceClientError {
  constructor(
    message: string,
    readonly status: number | undefined,
    /** SQS's `__type`, e.g. `com.amazonaws.sqs#AccessDenied`. */
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The caller is not allowed (403 or an authorization error type): retrying the same credentials will not help. */
  get denied(): boolean {
    return this.status === 403 || DENIED.test(this.code ?? '');
  }

  /**
   * SQS answered that the queue does not exist (QueueDoesNotExist; the query protocol's
   * AWS.SimpleQueueService.NonExistentQueue): deleted — SQS may delete a queue idle for 30 days —,
   * or not readable with these credentials, which SQS answers alike.
   */
  get missing(): boolean {
    return MISSING.test(this.code ?? '');
  }
}

interface SqsError {
  __type?: string;
  message?: string;
}

export class SqsDoorbellWaiter {
  private readonly signer: SigV4Signer;
  private readonly endpoint: URL;
  private readonly fetchImpl: typeof fetch;

  constructor(
    readonly queueUrl: string,
    options: SqsDoorbellOptions,
  ) {
    const url = new URL(queueUrl);
    const match = SQS_HOST.exec(url.hostname);
    const region = options.region ?? match?.[1] ?? match?.[2];
    if (!region) throw new SluiceConfigurationError(`No AWS region can be read from the doorbell queue URL '${queueUrl}': pass \`doorbell.region\`.`);
    this.signer = new SigV4Signer({ region, credentials: options.credentials, service: 'sqs' });
    // The JSON protocol posts to the service endpoint; the queue is named in the body.
    this.endpoint = new URL('/', url);
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /**
   * Long-polls the doorbell once (`waitSeconds`, whole seconds 0–20, default 20) and deletes the rings it got.
   * True when it rang; false when the poll ended empty or `signal` aborted it.
   */
  async wait(signal: AbortSignal, waitSeconds: number = DOORBELL_WAIT_SECONDS): Promise<boolean> {
    const seconds = Math.max(0, Math.min(DOORBELL_WAIT_SECONDS, Math.ceil(waitSeconds)));
    const answer = await this.call<{ Messages?: Array<{ ReceiptHandle: string }> }>(
      'ReceiveMessage',
      { QueueUrl: this.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: seconds },
      signal,
      seconds * 1000 + 10_000,
    );
    if (answer === undefined) return false;
    const rings = answer.Messages ?? [];
    if (rings.length === 0) return false;
    // A ring left undeleted wakes a consumer again after its visibility timeout: harmless, so a failed delete is not retried.
    await this.call('DeleteMessageBatch', { QueueUrl: this.queueUrl, Entries: rings.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }, undefined, 10_000).catch(
      () => undefined,
    );
    return true;
  }

  /** One JSON-protocol call; undefined when `signal` aborted it. */
  private async call<T>(action: string, input: Record<string, unknown>, signal: AbortSignal | undefined, timeoutMs: number): Promise<T | undefined> {
    const body = JSON.stringify(input);
    const headers = { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` };
    const signed = await this.signer.sign({ method: 'POST', url: this.endpoint, headers, body });
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await this.fetchImpl(this.endpoint, { method: 'POST', headers: { ...headers, ...signed }, body, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (error) {
      if (signal?.aborted) return undefined;
      throw new SqsDoorbellError(`Cannot reach SQS at ${this.endpoint.href} for ${this.queueUrl}: ${error instanceof Error ? error.message : String(error)}`, undefined, undefined, { cause: error });
    }
    const text = await response.text();
    if (!response.ok) {
      let problem: SqsError = {};
      try {
        problem = JSON.parse(text) as SqsError;
      } catch {
        // not JSON: reported as text below
      }
      throw new SqsDoorbellError(`SQS ${action} on ${this.queueUrl} answered ${response.status} ${problem.__type ?? ''}: ${problem.message ?? text.slice(0, 300)}`, response.status, problem.__type);
    }
    return (text ? JSON.parse(text) : {}) as T;
  }
}
