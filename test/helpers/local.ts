/** Starts the real local runtime (gateway + handlers) on a free port, on a table of the test file's own. */
import { dynamoEndpoint } from './dynamo-endpoint.js';
import { startLocal, type LocalRuntime } from '../../local/runtime.js';
import { tableName } from './stores.js';
import { SigV4Signer } from '../../lib/client/sigv4.js';
import { regionFromEndpoint } from '../../lib/client/endpoint.js';

export const TOKEN = 'test-token-123';

/**
 * Point the portable e2e files (`npm run test:remote`) at a deployed stack:
 * SLUICE_E2E_BASE_URL=https://<api-id>.execute-api.<region>.amazonaws.com.
 * Requests are then signed with SigV4 from the default AWS credential chain,
 * and topic/group names get a per-run suffix so runs never collide.
 */
export const REMOTE = process.env.SLUICE_E2E_BASE_URL?.replace(/\/$/, '') || undefined;
const RUN = Date.now().toString(36);
export const unique = (name: string) => (REMOTE ? `${name}-${RUN}` : name);

export async function startRuntime(options: { token?: string | undefined; checkbackEverySeconds?: number } = {}): Promise<LocalRuntime> {
  if (REMOTE) return { url: REMOTE, endpoint: 'aws', server: undefined as never, stop: async () => undefined };
  return startLocal({
    checkbackEverySeconds: options.checkbackEverySeconds ?? 60,
    host: '127.0.0.1',
    port: 0,
    token: 'token' in options ? options.token : TOKEN,
    tableName: tableName('e2e'),
    endpoint: dynamoEndpoint(),
    dataDir: undefined,
  });
}

let signer: Promise<SigV4Signer> | undefined;
async function sigv4(method: string, url: string, headers: Record<string, string>, body: string | undefined) {
  signer ??= import('@aws-sdk/credential-providers').then(
    ({ fromNodeProviderChain }) =>
      new SigV4Signer({ region: regionFromEndpoint(url) ?? process.env.AWS_REGION ?? 'us-east-1', credentials: fromNodeProviderChain() }),
  );
  return (await signer).sign({ method, url: new URL(url), headers, body });
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A tiny JSON client for the tests (the SDK comes later and is tested on its own). */
export function client(base: string, token: string | null = TOKEN) {
  const request = async <T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const plain = { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers };
    const auth =
      token === null ? {} : REMOTE && base === REMOTE ? await sigv4(method, `${base}${path}`, plain, payload) : { authorization: `Bearer ${token}` };
    const res = await fetch(`${base}${path}`, { method, headers: { ...plain, ...auth }, body: payload });
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
