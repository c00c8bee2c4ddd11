import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { COMPRESS_FROM_BYTES, fromStored, toStored } from '../../lib/adapters/dynamodb/records.js';
import type { MessageRecord } from '../../lib/domain/model.js';

const record = (body: string, encoding: 'utf8' | 'base64' = 'utf8'): MessageRecord => ({
  messageId: 'm1',
  topic: 'orders',
  body,
  encoding,
  tag: undefined,
  keys: [],
  properties: {},
  shardKey: undefined,
  sentAt: 1,
  deliverableAt: 1,
  expiresAt: 2,
  generation: 1,
});

const json = JSON.stringify({
  orderId: 'a4f9c2d0-1b7e-4c55-9f51-0c6f1f1e2b3a',
  lines: Array.from({ length: 12 }, (_, i) => ({ sku: `SKU-${1000 + i}`, quantity: i + 1, unitPrice: 9.99 + i, currency: 'EUR' })),
});

describe('stored records', () => {
  it('keeps small bodies as text', () => {
    const stored = toStored(record('hello'));
    expect(stored.b).toBe('hello');
    expect(stored.z).toBeUndefined();
  });

  it('stores a large compressible body deflated and reads it back unchanged', () => {
    expect(Buffer.byteLength(json)).toBeGreaterThan(COMPRESS_FROM_BYTES);
    const stored = toStored(record(json));
    expect(stored.b).toBeUndefined();
    expect(stored.z!.length).toBeLessThan(Buffer.byteLength(json) / 2);
    expect(fromStored(stored).body).toBe(json);
  });

  it('keeps an incompressible body as text', () => {
    const noise = randomBytes(1024).toString('base64');
    const stored = toStored(record(noise));
    expect(stored.b).toBe(noise);
    expect(fromStored(stored).body).toBe(noise);
  });

  it('round-trips base64 bodies through their bytes, and non-canonical base64 as text', () => {
    const bytes = Buffer.from(json.repeat(2), 'utf8').toString('base64');
    const stored = toStored(record(bytes, 'base64'));
    expect(stored.z).toBeDefined();
    expect(fromStored(stored)).toMatchObject({ body: bytes, encoding: 'base64' });
    const odd = `${'A'.repeat(1022)}B=`; // the last character carries bits that decoding drops
    expect(Buffer.from(odd, 'base64').toString('base64')).not.toBe(odd);
    expect(fromStored(toStored(record(odd, 'base64'))).body).toBe(odd);
  });

  it('keeps UTF-8 text exact', () => {
    const text = 'Grüße, 東京 🚀 '.repeat(80);
    expect(fromStored(toStored(record(text))).body).toBe(text);
  });
});
