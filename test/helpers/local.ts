/** Starts the real local runtime (gateway + handlers) on a free port, on a table of the test file's own. */
import { inject } from 'vitest';
import { startLocal, type LocalRuntime } from '../../local/runtime.js';
import { tableName } from './stores.js';

export const TOKEN = 'test-token-123';

export async function startRuntime(options: { token?: string | undefined; checkbackEverySeconds?: number } = {}): Promise<LocalRuntime> {
  return startLocal({
    checkbackEverySeconds: options.checkbackEverySeconds ?? 60,
    host: '127.0.0.1',
    port: 0,
    token: 'token' in options ? options.token : TOKEN,
    tableName: tableName('e2e'),
    endpoint: inject('dynamoEndpoint'),
    dataDir: undefined,
  });
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A tiny JSON client for the tests (the SDK comes later and is tested on its own). */
export function client(base: string, token: string | null = TOKEN) {
  const request = async <T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // leave as text
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  };
  return {
    request,
    get: <T = any>(path: string) => request<T>('GET', path),
    put: <T = any>(path: string, body: unknown) => request<T>('PUT', path, body),
    post: <T = any>(path: string, body: unknown) => request<T>('POST', path, body),
    del: <T = any>(path: string) => request<T>('DELETE', path),
  };
}
