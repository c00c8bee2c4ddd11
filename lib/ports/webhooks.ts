/** Calling producers' checker webhooks. */
export interface WebhookResponse {
  status: number;
  body: string;
  /** The answer was longer than the client reads: `body` is only its start. */
  truncated?: boolean;
}

export interface WebhookClient {
  /** POSTs `body`; rejects on network errors, timeouts and refused (SSRF) addresses. */
  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<WebhookResponse>;
  /** Resolves the URL's host and rejects when any address it resolves to may not be called. */
  vet(url: string): Promise<void>;
}

/** Sealing secrets at rest (KMS on AWS, AES-GCM with a local key in the local runtime). */
export interface SecretBox {
  seal(plain: string, context: Record<string, string>): Promise<string>;
  open(sealed: string, context: Record<string, string>): Promise<string>;
}

/** Hands due transaction checks to workers (SQS on AWS, in-process locally). */
export interface CheckDispatcher {
  /** Hands `transactionIds` to the check workers after `delayMs` (default 0; SQS DelaySeconds, at most 900 s). */
  dispatch(transactionIds: string[], delayMs?: number): Promise<void>;
}
