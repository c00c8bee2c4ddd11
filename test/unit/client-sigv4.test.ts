/**
 * SigV4 for a deployed stack: the signature the client sends equals one
 * computed here independently (node:crypto, AWS's documented algorithm),
 * with fixed credentials and a fixed date.
 */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SluiceClient, SluiceConfigurationError, isAwsEndpoint, regionFromEndpoint, signingServiceOf } from '../../lib/client/index.js';
import { SigV4Signer } from '../../lib/client/sigv4.js';

const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session-token-example',
};
const date = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const endpoint = 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const hmac = (key: Buffer | string, text: string) => createHmac('sha256', key).update(text).digest();
const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** SigV4 written out from the AWS documentation, for comparison. */
function expectedSignature(
  request: { method: string; url: URL; headers: Record<string, string>; body: string },
  signedHeaders: string[],
  { region, service }: { region: string; service: string } = { region: 'eu-west-1', service: 'execute-api' },
) {
  return signatureParts(request, signedHeaders, { region, service }).signature;
}

/** The canonical request, string to sign and signature of SigV4 (docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html). */
function signatureParts(
  request: { method: string; url: URL; headers: Record<string, string>; body: string },
  signedHeaders: string[],
  { region, service }: { region: string; service: string },
) {
  const canonicalUri = request.url.pathname
    .split('/')
    .map((segment) => rfc3986(segment))
    .join('/');
  const canonicalQuery = [...request.url.searchParams]
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const lower = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v.trim()]));
  const canonicalHeaders = signedHeaders.map((name) => `${name}:${lower[name]}\n`).join('');
  const canonicalRequest = [request.method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaders.join(';'), sha256(request.body)].join('\n');
  const scope = `20260102/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', '20260102T030405Z', scope, sha256(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${credentials.secretAccessKey}`, '20260102');
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  return { canonicalRequest, stringToSign, signature: createHmac('sha256', key).update(stringToSign).digest('hex') };
}

describe('SigV4 signing', () => {
  it('signs with the execute-api scope, the session token and a body hash, matching an independent computation', async () => {
    const signer = new SigV4Signer({ region: 'eu-west-1', credentials });
    const url = new URL(`${endpoint}/v1/topics/orders/messages?b=2&a=1&key=order%2042%2Fx`);
    const body = JSON.stringify({ body: 'hi', dedupId: 'fixed' });
    const headers = await signer.sign(
      { method: 'POST', url, headers: { accept: 'application/json', 'content-type': 'application/json', 'user-agent': 'sluice-client/test' }, body },
      date,
    );
    expect(headers['x-amz-date']).toBe('20260102T030405Z');
    expect(headers['x-amz-security-token']).toBe('session-token-example');
    expect(headers['x-amz-content-sha256']).toBe(sha256(body));
    expect(headers.host).toBeUndefined(); // fetch sets it from the URL
    const match = /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20260102\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
      headers.authorization ?? '',
    );
    expect(match, headers.authorization).not.toBeNull();
    const signed = match![1]!.split(';');
    expect(signed).toEqual(['accept', 'content-type', 'host', 'x-amz-content-sha256', 'x-amz-date', 'x-amz-security-token']);
    expect(signed).not.toContain('user-agent');
    const expected = expectedSignature({ method: 'POST', url, headers: { ...headers, host: url.host }, body }, signed);
    expect(match![2]).toBe(expected);
  });

  it('is deterministic for a fixed date and changes with the date', async () => {
    const signer = new SigV4Signer({ region: 'eu-west-1', credentials: async () => credentials });
    const request = { method: 'GET', url: new URL(`${endpoint}/v1/topics`), headers: { accept: 'application/json' } };
    const a = await signer.sign(request, date);
    const b = await signer.sign(request, date);
    const c = await signer.sign(request, new Date(date.getTime() + 1000));
    expect(a.authorization).toBe(b.authorization);
    expect(c.authorization).not.toBe(a.authorization);
  });

  it('reads the region from execute-api endpoints', () => {
    expect(regionFromEndpoint(endpoint)).toBe('eu-west-1');
    expect(regionFromEndpoint('https://queue.example.com')).toBeUndefined();
    expect(isAwsEndpoint(endpoint)).toBe(true);
    expect(isAwsEndpoint('http://127.0.0.1:3000')).toBe(false);
  });
});

describe('SigV4 for a Lambda function URL (service lambda)', () => {
  const functionUrl = 'https://abcdefghijklmnopqrstuvwxyz012345.lambda-url.ap-southeast-2.on.aws/';

  it('reads the region and the signing name from the function URL, and only from one', () => {
    expect(regionFromEndpoint(functionUrl)).toBe('ap-southeast-2');
    expect(isAwsEndpoint(functionUrl)).toBe(true);
    expect(signingServiceOf(functionUrl)).toBe('lambda');
    expect(signingServiceOf(endpoint)).toBe('execute-api');
    expect(signingServiceOf('https://queue.example.com')).toBe('execute-api');
    // Not a function URL: the suffix must be the host's own.
    expect(isAwsEndpoint('https://x.lambda-url.us-east-1.on.aws.example.com')).toBe(false);
    expect(signingServiceOf('https://x.lambda-url.us-east-1.on.aws.example.com')).toBe('execute-api');
    expect(regionFromEndpoint('https://on.aws')).toBeUndefined();
  });

  it('puts lambda in the credential scope and the signing key; the canonical request double-encodes the path', async () => {
    const signer = new SigV4Signer({ region: 'ap-southeast-2', credentials, service: 'lambda' });
    const url = new URL(`${functionUrl}v1/topics/a%20b/messages?key=order%2042`);
    const body = JSON.stringify({ body: 'hi' });
    const headers = await signer.sign({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body }, date);
    const match = /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20260102\/ap-southeast-2\/lambda\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
      headers.authorization ?? '',
    );
    expect(match, headers.authorization).not.toBeNull();
    const signed = match![1]!.split(';');
    expect(signed).toEqual(['content-type', 'host', 'x-amz-content-sha256', 'x-amz-date', 'x-amz-security-token']);
    const parts = signatureParts({ method: 'POST', url, headers: { ...headers, host: url.host }, body }, signed, { region: 'ap-southeast-2', service: 'lambda' });
    expect(parts.canonicalRequest.split('\n').slice(0, 3)).toEqual(['POST', '/v1/topics/a%2520b/messages', 'key=order%2042']);
    expect(parts.stringToSign.split('\n')[2]).toBe('20260102/ap-southeast-2/lambda/aws4_request');
    expect(match![2]).toBe(parts.signature);
    // The same request signed for execute-api has another signature: the service is part of the key.
    const other = await new SigV4Signer({ region: 'ap-southeast-2', credentials }).sign({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body }, date);
    expect(other.authorization).toContain('/ap-southeast-2/execute-api/aws4_request');
    expect(other.authorization).not.toBe(headers.authorization);
  });

  it('SluiceClient signs with service lambda when the endpoint is a function URL, execute-api when told so', async () => {
    const sent: Array<Record<string, string>> = [];
    const fetchStub = async (_input: string | URL | Request, init?: RequestInit) => {
      sent.push(init?.headers as Record<string, string>);
      return new Response(JSON.stringify({ topics: [], nextToken: null }), { status: 200 });
    };
    await new SluiceClient({ endpoint: functionUrl, credentials, fetch: fetchStub }).listTopics();
    expect(sent[0]!.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/ap-southeast-2\/lambda\/aws4_request, /);
    // A proxy in front of a function URL: the signing name and region are given.
    await new SluiceClient({ endpoint: 'https://queue.example.com', auth: 'sigv4', region: 'eu-west-1', signingService: 'lambda', credentials, fetch: fetchStub }).listTopics();
    expect(sent[1]!.authorization).toMatch(/\/eu-west-1\/lambda\/aws4_request, /);
    await new SluiceClient({ endpoint: 'https://queue.example.com', auth: 'sigv4', region: 'eu-west-1', credentials, fetch: fetchStub }).listTopics();
    expect(sent[2]!.authorization).toMatch(/\/eu-west-1\/execute-api\/aws4_request, /);
  });
});

describe('SluiceClient with SigV4', () => {
  it('signs every request when the endpoint is an execute-api URL and no token is given', async () => {
    const sent: Array<{ url: string; headers: Record<string, string> }> = [];
    const client = new SluiceClient({
      endpoint,
      credentials,
      fetch: async (input, init) => {
        sent.push({ url: String(input), headers: init?.headers as Record<string, string> });
        return new Response(JSON.stringify({ topics: [], nextToken: null }), { status: 200 });
      },
    });
    await client.listTopics();
    expect(sent[0]!.url).toBe(`${endpoint}/v1/topics`);
    expect(sent[0]!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, /);
    expect(sent[0]!.headers['x-amz-security-token']).toBe('session-token-example');
  });

  it('asks for a region it cannot infer', () => {
    expect(() => new SluiceClient({ endpoint: 'https://queue.example.com', auth: 'sigv4', credentials })).toThrow(SluiceConfigurationError);
    expect(() => new SluiceClient({ endpoint: 'https://queue.example.com', auth: 'sigv4', region: 'us-east-1', credentials })).not.toThrow();
  });

  it('uses a bearer token when one is given, even for AWS endpoints', async () => {
    let headers: Record<string, string> = {};
    const client = new SluiceClient({
      endpoint,
      token: 'abc',
      fetch: async (_input, init) => {
        headers = init?.headers as Record<string, string>;
        return new Response('{"status":"ok"}', { status: 200 });
      },
    });
    await client.health();
    expect(headers.authorization).toBe('Bearer abc');
  });
});
