import { describe, expect, it } from 'vitest';
import { CommitBody, Name, PatchTopicBody, PutTopicBody, ReceiveBody, SendBody } from '../../functions/api/schemas.js';
import { openApiDocument } from '../../functions/api/openapi-document.js';
import { routes } from '../../functions/api/routes.js';

describe('request schemas', () => {
  it('accept names of 1-128 allowed characters only', () => {
    expect(Name.safeParse('a.B_c-1').success).toBe(true);
    expect(Name.safeParse('x'.repeat(128)).success).toBe(true);
    expect(Name.safeParse('x'.repeat(129)).success).toBe(false);
    expect(Name.safeParse('a/b').success).toBe(false);
    expect(Name.safeParse('').success).toBe(false);
  });

  it('take 1–256 partitions on PUT and PATCH of a topic (Limits.partitionsMax)', () => {
    for (const schema of [PutTopicBody, PatchTopicBody]) {
      expect(schema.safeParse({ type: 'standard', partitions: 256 }).success).toBe(true);
      expect(schema.safeParse({ type: 'standard', partitions: 1 }).success).toBe(true);
      expect(schema.safeParse({ type: 'standard', partitions: 257 }).success).toBe(false);
      expect(schema.safeParse({ type: 'standard', partitions: 0 }).success).toBe(false);
    }
  });

  it('default receive options', () => {
    expect(ReceiveBody.parse({})).toEqual({ maxMessages: 10, waitSeconds: 0 });
    expect(ReceiveBody.safeParse({ park: true, doorbellMissing: true }).success).toBe(true);
    expect(ReceiveBody.safeParse({ park: true, doorbellMissing: false }).success).toBe(true);
    expect(ReceiveBody.safeParse({ doorbellMissing: true }).error?.issues.map((i) => i.path.join('/'))).toEqual(['doorbellMissing']);
  });

  it('validate sends', () => {
    expect(SendBody.parse({ body: 'x' })).toEqual({ body: 'x', encoding: 'utf8' });
    expect(SendBody.safeParse({ body: 'aGk=', encoding: 'base64' }).success).toBe(true);
    expect(SendBody.safeParse({ body: 'a', encoding: 'base64' }).success).toBe(false);
    expect(SendBody.safeParse({ body: 'x', deliverAt: '2026-12-01T00:00:00Z' }).success).toBe(true);
    expect(SendBody.safeParse({ body: 'x', deliverAt: 'tomorrow' }).success).toBe(false);
    expect(SendBody.safeParse({ body: 'x', delaySeconds: 1, deliverAt: 5 }).success).toBe(false);
  });

  it('refuse deliverAt numbers below 10^11 as epoch seconds, accept epoch milliseconds', () => {
    for (const seconds of [0, -1, 1_764_547_200, 99_999_999_999]) {
      const parsed = SendBody.safeParse({ body: 'x', deliverAt: seconds });
      expect(parsed.success, String(seconds)).toBe(false);
      expect(parsed.error?.issues).toEqual([expect.objectContaining({ path: ['deliverAt'], message: expect.stringContaining('looks like epoch seconds') })]);
    }
    expect(SendBody.safeParse({ body: 'x', deliverAt: 100_000_000_000 }).success).toBe(true);
    expect(SendBody.safeParse({ body: 'x', deliverAt: 1_764_547_200_000 }).success).toBe(true);
    expect(SendBody.safeParse({ body: 'x', properties: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])) }).success).toBe(false);
    expect(CommitBody.safeParse({ entries: [] }).success).toBe(false);
  });
});

describe('OpenAPI document', () => {
  it('describes every route with its method', () => {
    const doc = openApiDocument() as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    for (const route of routes) expect(doc.paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
  });
});
