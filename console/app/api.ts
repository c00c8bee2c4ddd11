/**
 * The console's only way to the server: the public v1 API on the page's own origin.
 * The local runtime's bearer token lives in sessionStorage (never in a URL); behind
 * `sluice console` there is none, the local server signs instead.
 */
const TOKEN_KEY = 'sluice.token';

export const savedToken = (): string => sessionStorage.getItem(TOKEN_KEY) ?? '';
export const saveToken = (token: string): void => (token ? sessionStorage.setItem(TOKEN_KEY, token) : sessionStorage.removeItem(TOKEN_KEY));

/** An RFC 9457 problem the server answered (or one made up for an answer that was not one). */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(`${status} ${code}: ${detail}`);
  }
}

/** One API call; answers the parsed JSON (undefined for 204), throws ApiProblem otherwise. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = savedToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch (error) {
    throw new ApiProblem(0, 'Unreachable', `The server did not answer (${String(error)}).`);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const problem = (json ?? {}) as { code?: string; detail?: string; title?: string };
    throw new ApiProblem(res.status, problem.code ?? res.statusText, problem.detail ?? problem.title ?? text.slice(0, 200));
  }
  return json as T;
}

export const enc = encodeURIComponent;

/** Every item of a paged listing, up to `max`. */
export async function listAll<T>(path: string, field: string, max = 500): Promise<T[]> {
  const items: T[] = [];
  let next: string | null = null;
  do {
    const page: Record<string, unknown> = await api('GET', `${path}?limit=100${next ? `&nextToken=${enc(next)}` : ''}`);
    items.push(...((page[field] as T[]) ?? []));
    next = (page.nextToken as string | null) ?? null;
  } while (next && items.length < max);
  return items;
}
