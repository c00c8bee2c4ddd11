/**
 * `receiveEndpoint`: receives (and receives that carry commits) go to the receive function's own
 * URL, signed like every other call; everything else stays on `endpoint`. Without it, receives go
 * to `endpoint` (the api function answers them too). Signing: SigV4 (service lambda, region from
 * each function URL) with fixed credentials, checked by the `Authorization` header's scope.
 */
import { describe, expect, it } from 'vitest';
import { SluiceClient } from '../../lib/client/index.js';

interface Seen {
  url: string;
  method: string;
  authorization: string | undefined;
  body: string | undefined;
}

function recording(options: { endpoint: string; receiveEndpoint?: string; token?: string }) {
  const seen: Seen[] = [];
  const client = new SluiceClient({
    ...options,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers);
      seen.push({ url: String(input), method: init?.method ?? 'GET', authorization: headers.get('authorization') ?? undefined, body: init?.body as string | undefined });
      const path = new URL(String(input)).pathname;
      const body = path.endsWith('/receive') ? { messages: [], commitResults: [{ receiptHandle: 'h1', status: 'committed' }] } : path.endsWith('/commit') ? { results: [] } : { name: 'g', visibilityTimeoutSeconds: 30 };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  return { client, seen };
}

const API = 'https://apiapiapiapiapiapiapiapiapiapi01.lambda-url.eu-west-1.on.aws/';
const RECEIVE = 'https://recvrecvrecvrecvrecvrecvrecvrecv.lambda-url.eu-west-1.on.aws/';

describe('SluiceClient receiveEndpoint', () => {
  it('sends receive and receiveAndCommit to receiveEndpoint, every other call to endpoint, all SigV4-signed for lambda', async () => {
    const { client, seen } = recording({ endpoint: API, receiveEndpoint: RECEIVE });
    expect(client.receiveEndpoint).toBe(RECEIVE);
    await client.receive('g', { maxMessages: 1 });
    await client.receiveAndCommit('g', ['h1'], { maxMessages: 1 });
    await client.getGroup('g');
    await client.commit('g', ['h2']);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      `POST ${RECEIVE}v1/groups/g/receive`,
      `POST ${RECEIVE}v1/groups/g/receive`,
      `GET ${API}v1/groups/g`,
      `POST ${API}v1/groups/g/commit`,
    ]);
    for (const s of seen) expect(s.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/lambda\/aws4_request, /);
    expect(JSON.parse(seen[1]?.body ?? '{}')).toEqual({ maxMessages: 1, commit: ['h1'] });
  });

  it('sends receives to endpoint when no receiveEndpoint is given, with the same authentication', async () => {
    const { client, seen } = recording({ endpoint: 'http://127.0.0.1:3000', token: 'tok' });
    expect(client.receiveEndpoint).toBe('http://127.0.0.1:3000');
    await client.receive('g', { maxMessages: 1 });
    expect(seen).toEqual([{ url: 'http://127.0.0.1:3000/v1/groups/g/receive', method: 'POST', authorization: 'Bearer tok', body: '{"maxMessages":1}' }]);
  });

  it('refuses a receiveEndpoint that is not an http(s) URL at construction', () => {
    expect(() => new SluiceClient({ endpoint: API, receiveEndpoint: 'not a url' })).toThrow(/not a URL/);
  });
});
