/** A small JSON client over fetch for the benchmark (plain HTTP, bearer token, a tag header for attribution). */

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

/** A 1 KiB message body carrying the send time (performance.now() of this process). */
export function messageBody(bytes: number, extra: Record<string, unknown> = {}): string {
  const t = performance.now();
  const head = JSON.stringify({ t, ...extra, p: '' });
  return JSON.stringify({ t, ...extra, p: 'x'.repeat(Math.max(0, bytes - Buffer.byteLength(head))) });
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
