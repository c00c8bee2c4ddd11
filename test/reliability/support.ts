/** Shared pieces of the reliability suite: scale, seeded randomness, a retrying HTTP client, storage snapshots, batch sends. */
import { expect } from 'vitest';

/** `full` (npm run test:reliability) or `ci` (the shortened run inside npm test). */
export const SCALE: 'full' | 'ci' = process.env.SLUICE_RELIABILITY_SCALE === 'ci' ? 'ci' : 'full';

/** Picks the figure for this scale. */
export const scaled = <T>(full: T, ci: T): T => (SCALE === 'full' ? full : ci);

/** Deterministic pseudo-random numbers (mulberry32); the seed is printed so a failing run can be replayed. */
export function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    between: (min: number, max: number) => min + next() * (max - min),
    int: (min: number, max: number) => Math.floor(min + next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** One entry of a workload's batch send (its body doubles as its `dedupId`). */
export interface BatchEntry {
  body: string;
  shardKey?: string;
  keys?: string[];
}

/**
 * Sends `entries` to `topic` as batches (`dedupId` = body), sending again the ones answered 429/503,
 * until every one is accepted (or `maxRounds` passed); `accepted` hears each acknowledgement with
 * the answer's time. Any other refusal fails the workload.
 */
export async function sendUntilAccepted<E extends BatchEntry>(
  http: Http,
  topic: string,
  entries: E[],
  accepted: (entry: E, messageId: string, at: number) => void,
  maxRounds = Infinity,
): Promise<void> {
  for (let pending = entries, round = 0; pending.length > 0 && round < maxRounds; round++) {
    const res = await http.call('POST', `/v1/topics/${topic}/messages/batch`, { entries: pending.map((e) => ({ ...e, dedupId: e.body })) }, { deadlineMs: 300_000, timeoutMs: 60_000 });
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
    const failed: E[] = [];
    for (const r of res.body.results as Array<{ index: number; messageId?: string; error?: { status: number } }>) {
      const entry = pending[r.index]!;
      if (r.messageId) accepted(entry, r.messageId, res.at);
      else if (r.error && (r.error.status === 429 || r.error.status === 503)) failed.push(entry);
      else throw new Error(`entry refused: ${JSON.stringify(r)}`);
    }
    pending = failed;
    if (pending.length) await sleep(100);
  }
}

/** Runs `send(0 … batches − 1)` spread evenly over `seconds`. */
export async function paced(batches: number, seconds: number, send: (batch: number) => Promise<void>): Promise<void> {
  const t0 = Date.now();
  for (let b = 0; b < batches; b++) {
    await send(b);
    await sleep(t0 + ((b + 1) * seconds * 1000) / batches - Date.now());
  }
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  /** Milliseconds since the epoch when the request was sent (first byte) and when its answer arrived. */
  sentAt: number;
  at: number;
}

export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
}

export interface HttpCounters {
  requests: number;
  connectionErrors: number;
  /** 429 and 503 answers (with Retry-After) that were retried. */
  retryable: number;
  /** How often each retryable problem was answered (status and detail). */
  retryableDetails: Record<string, number>;
  /** Every 5xx other than 503, and every problem without Retry-After where one is due: the suite asserts none. */
  serverErrors: string[];
}

/**
 * A JSON client that tolerates the runtime being down: connection errors,
 * 429 and 503 are retried with jittered backoff until `deadlineMs`. Other
 * answers (2xx, 4xx) are returned. A 5xx other than 503 is recorded (the
 * suite fails on any) and retried too, so that the workload still completes.
 */
export class Http {
  readonly counters: HttpCounters = { requests: 0, connectionErrors: 0, retryable: 0, retryableDetails: {}, serverErrors: [] };

  constructor(
    readonly base: string,
    private readonly token: string | null,
  ) {}

  /** One attempt; throws {@link ConnectionError} when there is no answer. */
  async once<T = any>(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<Reply<T>> {
    const sentAt = Date.now();
    this.counters.requests++;
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (error) {
      this.counters.connectionErrors++;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new ConnectionError(`${method} ${path}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T, sentAt, at: Date.now() };
  }

  /** Retries until an answer that is neither a connection error nor retryable, or until the deadline. */
  async call<T = any>(method: string, path: string, body?: unknown, options: { deadlineMs?: number; timeoutMs?: number } = {}): Promise<Reply<T>> {
    const deadline = Date.now() + (options.deadlineMs ?? 300_000);
    let lastError = '';
    for (let attempt = 0; attempt < 10_000 && Date.now() < deadline; attempt++) {
      try {
        const reply = await this.once<T>(method, path, body, options.timeoutMs);
        if (reply.status === 429 || reply.status === 503) {
          this.counters.retryable++;
          const key = `${reply.status} ${method} ${path.replace(/\/(topics|groups|transactions|producers)\/[^/]+/, '/$1/*')}: ${(reply.body as { detail?: string })?.detail ?? ''}`;
          this.counters.retryableDetails[key] = (this.counters.retryableDetails[key] ?? 0) + 1;
          if (!reply.headers.get('retry-after')) this.counters.serverErrors.push(`${reply.status} without Retry-After: ${method} ${path}`);
          lastError = `${reply.status} ${(reply.body as { detail?: string })?.detail ?? ''}`;
        } else if (reply.status >= 500) {
          this.counters.serverErrors.push(`${reply.status} ${method} ${path}: ${JSON.stringify(reply.body).slice(0, 300)}`);
          lastError = `${reply.status}`;
        } else {
          return reply;
        }
      } catch (error) {
        if (!(error instanceof ConnectionError)) throw error;
        lastError = error.message;
      }
      await sleep(Math.min(1000, 50 * 2 ** Math.min(attempt, 5)) * (0.5 + Math.random()));
    }
    throw new Error(`gave up on ${method} ${path} after the deadline: ${lastError}`);
  }
}

/** What a client can see of storage: topics, groups and their statistics (ages zeroed: they move with time). */
export async function snapshot(http: Http) {
  const topics = await http.call('GET', '/v1/topics?limit=100');
  const groups = await http.call('GET', '/v1/groups?limit=100');
  const details = await Promise.all(
    ((groups.body.groups ?? []) as Array<{ name: string }>).map(async (g) => {
      const detail = await http.call('GET', `/v1/groups/${g.name}`);
      return { ...detail.body, oldestMessageAgeSeconds: 0 };
    }),
  );
  const topicDetails = await Promise.all(
    ((topics.body.topics ?? []) as Array<{ name: string }>).map(async (t) => (await http.call('GET', `/v1/topics/${t.name}`)).body),
  );
  return { topics: topics.body, topicDetails, groups: groups.body, details };
}

/** Percentile of a list of numbers (nearest rank). */
export const percentile = (values: number[], p: number) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
};
