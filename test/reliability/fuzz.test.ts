/**
 * Property-based fuzzing (fast-check) of every route's body, path, query and
 * headers: every answer is a 4xx problem+json (never a 5xx), and nothing in
 * storage changes. Also the cheap refusal of oversize and deeply nested
 * bodies, invalid UTF-8, wrong content types, huge numbers and
 * prototype-pollution keys.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { routes, type RouteDef } from '../../functions/api/routes.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { startRuntime, TOKEN } from '../helpers/local.js';
import { Http, SCALE, scaled, snapshot } from './support.js';

const RUNS = scaled(400, 60); // per property
let runtime: LocalRuntime;
let http: Http;
let receipt = '';
const figures: Record<string, number> = {};

beforeAll(async () => {
  runtime = await startRuntime();
  http = new Http(runtime.url, TOKEN);
  await http.call('PUT', '/v1/topics/orders', { type: 'standard' });
  await http.call('PUT', '/v1/topics/ledger', { type: 'fifo' });
  await http.call('PUT', '/v1/groups/billing', { subscriptions: [{ topic: 'orders' }] });
  await http.call('PUT', '/v1/producers/shop', { checkerUrl: 'http://127.0.0.1:9/checks' });
  await http.call('POST', '/v1/topics/orders/messages', { body: 'seed' });
  receipt = (await http.call('POST', '/v1/groups/billing/receive', { maxMessages: 1, visibilityTimeoutSeconds: 3600 })).body.messages[0].receiptHandle;
});
afterAll(async () => {
  console.log(`fuzz (${SCALE}): ${JSON.stringify(figures)}`);
  await runtime?.stop();
});

/** Existing resources, so that a fuzzed body reaches the handler's validation behind a valid path. */
const validParams: Record<string, string> = {
  topic: 'orders',
  group: 'billing',
  producerGroup: 'shop',
  transactionId: 't01ARZ3NDEKTSV4RRFFQ69G5FAV',
  messageId: 'mAAAA',
};

const concrete = (route: RouteDef, params: Record<string, string> = {}) =>
  route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? validParams[name] ?? 'x'));

interface Answer {
  status: number;
  contentType: string;
  body: any;
  ms: number;
}

async function raw(method: string, path: string, body: string | Uint8Array | undefined, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${runtime.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...headers },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: parsed, ms: performance.now() - started };
}

const failures: string[] = [];
function expectRefused(answer: Answer, what: string) {
  const ok =
    answer.status >= 400 &&
    answer.status < 500 &&
    /^application\/problem\+json/.test(answer.contentType) &&
    typeof answer.body === 'object' &&
    answer.body !== null &&
    answer.body.status === answer.status &&
    typeof answer.body.code === 'string' &&
    typeof answer.body.detail === 'string' &&
    typeof answer.body.title === 'string' &&
    typeof answer.body.type === 'string';
  if (!ok && failures.length < 20) failures.push(`${what} → ${answer.status} ${answer.contentType} ${JSON.stringify(answer.body).slice(0, 300)}`);
  return ok;
}

const bodyRoutes = routes.filter((r) => r.body);
const paramRoutes = routes.filter((r) => r.params);
const queryRoutes = routes.filter((r) => r.query);
const byEntry = (entry: string) => routes.find((r) => r.entry === entry)!;

/** Keys a strict schema never accepts, including the prototype-pollution classics. */
const unknownKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__', 'valueOf', ''),
  fc.string({ minLength: 1, maxLength: 20 }).map((s) => `x-${s}`),
);

const hugeNumber = fc.constantFrom('1e999', '-1e999', '1e308', '18446744073709551616', '-0', '0.0000000000000000000001', '123456789012345678901234567890', '1E400');

/** JSON that can never be a valid request body: non-objects, or objects with an unknown key (schemas are strict). */
const invalidJsonBody = fc.oneof(
  fc.jsonValue().filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)).map((v) => JSON.stringify(v)),
  fc
    .tuple(fc.dictionary(fc.constantFrom('type', 'body', 'entries', 'subscriptions', 'receiptHandle', 'maxMessages', 'checkerUrl', 'visibilityTimeoutSeconds', 'properties', 'transaction'), fc.jsonValue({ maxDepth: 3 })), unknownKey, fc.jsonValue({ maxDepth: 3 }))
    .map(([known, key, value]) => {
      // Written by hand so that "__proto__" is an own key of the JSON text, as an attacker would send it.
      const inner = JSON.stringify(known).slice(1, -1);
      return `{${inner}${inner ? ',' : ''}${JSON.stringify(key)}:${JSON.stringify(value)}}`;
    }),
  hugeNumber.map((n) => `{"maxMessages":${n},"x-unknown":1}`),
  hugeNumber,
);

/** Text that is not JSON at all. */
const notJson = fc.oneof(
  fc.string({ maxLength: 200 }).filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  }),
  fc.constantFrom('{', '[', '{"a":', '{"body":"x",}', "{'body':'x'}", 'NaN', 'undefined', '{"body":"x"}garbage', '\u0000', '\ufeff{'),
);

/** Bytes that are not valid UTF-8 (lone continuation bytes, overlongs, surrogates, truncated sequences). */
const invalidUtf8 = fc
  .tuple(
    fc.constantFrom('{"body":"', '{"type":"', '{"subscriptions":[{"topic":"', '{"checkerUrl":"', '{"entries":[{"receiptHandle":"'),
    fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xfe, 0xfe]),
    fc.constantFrom('"}', '"}]}', '"}],"x-unknown":1}'),
  )
  .map(([head, bad, tail]) => Buffer.concat([Buffer.from(head), Buffer.from(bad), Buffer.from(tail)]));

const contentType = fc.oneof(
  fc.constant('application/json'),
  fc.constant('application/json; charset=utf-8'),
  fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx', 'json', ''),
  fc.string({ maxLength: 40 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
);

/** Path parameters: anything (encoded), from empty to far too long, unicode, dots, percent signs. */
const paramValue = fc.oneof(
  fc.string({ minLength: 0, maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('..', '.', '%', '%00', 'a/b', 'a b', '\u0000', 'x'.repeat(129), 'é', '🙂', '__proto__', 'constructor'),
);

describe(`fuzzing every route (${RUNS} runs per property)`, () => {
  let before: Awaited<ReturnType<typeof snapshot>>;
  beforeAll(async () => {
    before = await snapshot(http);
  });
  beforeEach(() => {
    failures.length = 0;
  });

  it('refuses fuzzed JSON bodies on every route with a body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...bodyRoutes.map((r) => r.entry)).map(byEntry), fc.oneof(invalidJsonBody, notJson), contentType, async (route, body, type) => {
        const answer = await raw(route.method, concrete(route), body, type === '' ? {} : { 'content-type': type });
        figures.bodies = (figures.bodies ?? 0) + 1;
        expectRefused(answer, `${route.method} ${route.path} ${type} ${JSON.stringify(body).slice(0, 200)}`);
        return true;
      }),
      { numRuns: RUNS },
    );
    expect(failures).toEqual([]);
  });

  it('refuses invalid UTF-8 instead of mangling it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...bodyRoutes.map((r) => r.entry)).map(byEntry), invalidUtf8, async (route, bytes) => {
        const answer = await raw(route.method, concrete(route), bytes, { 'content-type': 'application/json' });
        figures.invalidUtf8 = (figures.invalidUtf8 ?? 0) + 1;
        expectRefused(answer, `${route.method} ${route.path} ${bytes.toString('hex')}`);
        return true;
      }),
      { numRuns: Math.min(RUNS, 100) },
    );
    expect(failures).toEqual([]);
  });

  it('refuses a send whose strings are not valid UTF-8 instead of storing U+FFFD', async () => {
    for (const bad of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80]]) {
      const bytes = Buffer.concat([Buffer.from('{"body":"a'), Buffer.from(bad), Buffer.from('b"}')]);
      const answer = await raw('POST', '/v1/topics/orders/messages', bytes, { 'content-type': 'application/json' });
      expectRefused(answer, `send with ${Buffer.from(bad).toString('hex')}`);
      expect(answer.status).toBe(400);
    }
    expect(failures).toEqual([]);
  });

  it('refuses fuzzed path parameters on every route with parameters', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paramRoutes.map((r) => r.entry)).map(byEntry), paramValue, fc.oneof(invalidJsonBody, notJson), async (route, value, body) => {
        const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
        const params = Object.fromEntries(names.map((n) => [n, value]));
        // A fuzzed name could by chance be valid: the body stays invalid, so nothing can be written.
        const answer = await raw(route.method, concrete(route, params), route.body ? body : undefined, route.body ? { 'content-type': 'application/json' } : {});
        figures.paths = (figures.paths ?? 0) + 1;
        if (answer.status === 200 && route.method === 'GET') return true; // a read of something that exists
        expectRefused(answer, `${route.method} ${concrete(route, params)}`);
        return true;
      }),
      { numRuns: RUNS },
    );
    expect(failures).toEqual([]);
  });

  it('refuses fuzzed query strings on every route with a query', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...queryRoutes.map((r) => r.entry)).map(byEntry),
        fc.dictionary(fc.oneof(fc.constantFrom('limit', 'nextToken', 'key'), fc.string({ maxLength: 10 })), fc.oneof(fc.string({ maxLength: 50 }), hugeNumber), { minKeys: 1 }),
        unknownKey,
        async (route, query, extra) => {
          const search = new URLSearchParams({ ...query, [`x${extra}`]: '1' });
          const answer = await raw('GET', `${concrete(route)}?${search}`, undefined);
          figures.queries = (figures.queries ?? 0) + 1;
          expectRefused(answer, `GET ${concrete(route)}?${search}`);
          return true;
        },
      ),
      { numRuns: RUNS },
    );
    expect(failures).toEqual([]);
  });

  it('refuses fuzzed methods and unknown paths', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'FOO'),
        fc.array(fc.oneof(fc.constantFrom('v1', 'topics', 'groups', 'messages', 'batch', 'health', 'producers', 'transactions', 'receive', '..', ''), fc.string({ maxLength: 12 })), { maxLength: 6 }),
        async (method, segments) => {
          const path = `/${segments.map(encodeURIComponent).join('/')}`;
          const target = `${runtime.url}${path}`;
          const route = routes.find((r) => r.method === method && new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(new URL(target).pathname));
          if (route && (method === 'GET' || !route.body)) return true; // a legitimate read or a body-less action: covered elsewhere
          const answer = await raw(method, path, method === 'GET' ? undefined : '{"x-unknown":1}', { 'content-type': 'application/json' });
          figures.methodsAndPaths = (figures.methodsAndPaths ?? 0) + 1;
          if (answer.status === 200 && method === 'GET') return true;
          expectRefused(answer, `${method} ${path}`);
        },
      ),
      { numRuns: RUNS },
    );
    expect(failures).toEqual([]);
  });

  it('refuses oversize bodies quickly, declared or streamed', async () => {
    const big = Buffer.alloc(5 * 1024 * 1024, 'a');
    const times: number[] = [];
    for (const route of bodyRoutes) {
      const answer = await raw(route.method, concrete(route), big, { 'content-type': 'application/json' });
      expectRefused(answer, `5 MiB to ${route.method} ${route.path}`);
      expect(answer.status).toBe(413);
      times.push(answer.ms);
    }
    // Streamed without a content-length (chunked): refused once the limit is crossed.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 80; i++) controller.enqueue(new Uint8Array(64 * 1024).fill(0x61));
        controller.close();
      },
    });
    const started = performance.now();
    const res = await fetch(`${runtime.url}/v1/topics/orders/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    await res.text();
    times.push(performance.now() - started);
    figures.oversizeMaxMs = Math.round(Math.max(...times));
    expect(Math.max(...times)).toBeLessThan(2000);
    expect(failures).toEqual([]);
  });

  it('refuses deeply nested JSON cheaply', async () => {
    const times: number[] = [];
    for (const depth of [1_000, 100_000, 500_000]) {
      for (const [open, close] of [
        ['[', ']'],
        ['{"a":', '}'],
      ] as const) {
        const text = `{"body":"x","properties":${open.repeat(depth)}1${close.repeat(depth)}}`;
        if (Buffer.byteLength(text) > 1024 * 1024) continue;
        const answer = await raw('POST', '/v1/topics/orders/messages', text, { 'content-type': 'application/json' });
        expectRefused(answer, `nesting ${depth} ${open}`);
        times.push(answer.ms);
      }
    }
    figures.nestedMaxMs = Math.round(Math.max(...times));
    expect(Math.max(...times)).toBeLessThan(2000);
    expect(failures).toEqual([]);
  });

  it('never lets "__proto__" or "constructor" reach an object prototype', async () => {
    const probes = [
      '{"__proto__":{"polluted":"yes"},"type":"standard"}',
      '{"constructor":{"prototype":{"polluted":"yes"}},"type":"standard"}',
      '{"subscriptions":[{"topic":"orders","__proto__":{"polluted":"yes"}}]}',
      '{"body":"x","transaction":{"producerGroup":"shop","__proto__":{"polluted":"yes"}}}',
    ];
    for (const [i, text] of probes.entries()) {
      const path = i === 0 || i === 1 ? '/v1/topics/probe' : i === 2 ? '/v1/groups/probe' : '/v1/topics/orders/messages';
      const answer = await raw(i === 3 ? 'POST' : 'PUT', path, text, { 'content-type': 'application/json' });
      expectRefused(answer, text);
      expect(answer.status).toBe(400);
    }
    // The runtime runs in this process: its Object.prototype is ours.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(failures).toEqual([]);
  });

  it('changed nothing in storage', async () => {
    expect(await snapshot(http)).toEqual(before);
    expect((await http.call('GET', '/v1/producers/shop')).body).toMatchObject({ name: 'shop', checkerUrl: 'http://127.0.0.1:9/checks' });
    expect((await http.call('GET', '/v1/topics/probe')).status).toBe(404);
    expect(receipt).not.toBe('');
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});
