/**
 * The served OpenAPI document passes Redocly's `recommended` rules without errors
 * (@redocly/openapi-core: the lint engine of @redocly/cli, run in-process — offline,
 * no telemetry) and declares servers, response headers, enums and date-time formats.
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime } from '../helpers/local.js';

let runtime: LocalRuntime;
let served: { status: number; text: string; doc: any };

beforeAll(async () => {
  runtime = await startRuntime();
  const res = await client(runtime.url).get('/v1/openapi.json');
  served = { status: res.status, text: JSON.stringify(res.body), doc: res.body };
});
afterAll(async () => runtime?.stop());

describe('served OpenAPI document', () => {
  it('has no errors under the recommended rules', async () => {
    expect(served.status).toBe(200);
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: served.text, absoluteRef: 'openapi.json', config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  });

  it('declares servers, response headers, enums and date-time formats, and describes itself', () => {
    const { doc } = served;
    expect(doc.servers.map((s: { url: string }) => s.url)).toContain('http://127.0.0.1:3000');
    const send = doc.paths['/v1/topics/{topic}/messages'].post.responses;
    expect(send['201'].headers.Location).toMatchObject({ required: true });
    for (const status of ['429', '503']) expect(send[status].headers['Retry-After']).toMatchObject({ schema: { type: 'integer' } });
    expect(send['401'].headers['WWW-Authenticate']).toBeDefined();
    expect(doc.paths['/v1/topics/{topic}/messages/{messageId}'].delete.responses['409'].headers['Retry-After']).toBeDefined();
    const message = doc.paths['/v1/topics/{topic}/messages/{messageId}'].get.responses['200'].content['application/json'].schema;
    expect(message.properties.state.enum).toEqual(['deliverable', 'scheduled', 'prepared', 'cancelled', 'rolled-back', 'expired']);
    expect(message.properties.groups.items.properties.state.enum).toContain('dead-lettered');
    expect(message.properties.sentAt).toMatchObject({ type: 'string', format: 'date-time' });
    const tx = doc.paths['/v1/transactions/{transactionId}'].get.responses['200'].content['application/json'].schema;
    expect(tx.properties.state.enum).toEqual(['prepared', 'committed', 'rolled-back', 'expired']);
    expect(tx.properties.resolvedAt.anyOf ?? [tx.properties.resolvedAt]).toContainEqual(expect.objectContaining({ format: 'date-time' }));
    const self = doc.paths['/v1/openapi.json'].get.responses['200'].content['application/json'].schema;
    expect(self.required).toEqual(expect.arrayContaining(['openapi', 'info', 'paths']));
  });

  it('answers a send with the Location of the new message', async () => {
    const api = client(runtime.url);
    expect((await api.put('/v1/topics/oa-loc', { type: 'standard' })).status).toBe(200);
    const sent = await api.post('/v1/topics/oa-loc/messages', { body: 'x' });
    expect(sent.status).toBe(201);
    const location = sent.headers.get('location');
    expect(location).toBe(`/v1/topics/oa-loc/messages/${encodeURIComponent(sent.body.messageId)}`);
    expect((await api.get(location as string)).body.messageId).toBe(sent.body.messageId);
  });
});
