/** A small JSON client over fetch for the benchmark (plain HTTP, bearer token, a tag header for attribution). */
import { randomBytes } from 'node:crypto';

export interface Reply<T = any> {
  status: number;
  body: T;
  ms: number;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what} answered ${status}: ${typeof body === 'string' ? body : JSON.stringify(body)}`.slice(0, 600));
  }
}

export class Api {
  constructor(
    readonly base: string,
    private readonly token: string,
    /** Sent with every request (the scale rows' `x-bench-client`: which container serves it). */
    private readonly headers: Record<string, string> = {},
  ) {
    if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(base)) throw new Error(`The benchmark only talks to 127.0.0.1, not ${base}.`);
  }

  async request<T = any>(method: string, path: string, body: unknown, tag: string): Promise<Reply<T>> {
    const started = performance.now();
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        'x-bench-tag': tag,
        ...this.headers,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // keep the text
    }
    return { status: res.status, body: parsed as T, ms: performance.now() - started };
  }

  /** A request that must answer one of `ok` statuses. */
  async must<T = any>(method: string, path: string, body: unknown, tag: string, ok: number[] = [200, 201, 204]): Promise<Reply<T>> {
    const reply = await this.request<T>(method, path, body, tag);
    if (!ok.includes(reply.status)) throw new HttpError(reply.status, reply.body, `${method} ${path}`);
    return reply;
  }

  put(path: string, body: unknown, tag = 'setup') {
    return this.must('PUT', path, body, tag);
  }
}

export type BodyKind = 'json' | 'random';

const WORDS = ['blue', 'cotton', 'shirt', 'large', 'steel', 'bottle', 'organic', 'coffee', 'beans', 'wireless', 'mouse', 'desk', 'lamp', 'running', 'shoes', 'leather', 'wallet', 'green', 'tea', 'notebook', 'ceramic', 'mug', 'phone', 'case', 'winter', 'jacket', 'kids', 'backpack', 'garden', 'hose'];
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;
const digits = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 10)).join('');
const uuid = () => crypto.randomUUID();

/**
 * A message body of exactly `bytes` bytes carrying the send time
 * (performance.now() of this process).
 *
 * - `json` (the default): an order event with random ids, quantities, prices
 *   and product names — what a typical producer sends; it deflates to about
 *   half, as such JSON does (Sluice stores bodies from 512 B deflated when
 *   that pays).
 * - `random`: random base64 text, which does not compress: the worst case.
 */
export function messageBody(bytes: number, extra: Record<string, unknown> = {}, kind: BodyKind = 'json'): string {
  const t = performance.now();
  const fill = (room: number) =>
    kind === 'random'
      ? randomBytes(Math.ceil(room)).toString('base64').slice(0, Math.max(0, room))
      : Array.from({ length: Math.ceil(room / 5) }, () => pick(WORDS)).join(' ').slice(0, Math.max(0, room));
  if (kind === 'random') {
    const head = JSON.stringify({ t, ...extra, p: '' });
    return JSON.stringify({ t, ...extra, p: fill(bytes - Buffer.byteLength(head)) });
  }
  const order: Record<string, unknown> = {
    t,
    ...extra,
    type: 'order.created',
    orderId: uuid(),
    customerId: uuid(),
    createdAt: new Date().toISOString(),
    currency: pick(['EUR', 'USD', 'GBP']),
    lines: [] as unknown[],
    note: '',
  };
  const lines = order.lines as unknown[];
  for (;;) {
    const line = {
      sku: `SKU-${digits(6)}`,
      name: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`,
      quantity: 1 + Math.floor(Math.random() * 9),
      unitPrice: Number((Math.random() * 200).toFixed(2)),
    };
    lines.push(line);
    if (Buffer.byteLength(JSON.stringify(order)) > bytes) {
      lines.pop();
      break;
    }
  }
  order.note = fill(bytes - Buffer.byteLength(JSON.stringify(order)));
  return JSON.stringify(order);
}

/** The send time carried by a body made by {@link messageBody}. */
export function sentAt(body: string): number | undefined {
  try {
    const t = (JSON.parse(body) as { t?: unknown }).t;
    return typeof t === 'number' ? t : undefined;
  } catch {
    return undefined;
  }
}
