/**
 * AWS limits kept by construction (docs/design.md, Limits by construction), on DynamoDB Local,
 * which enforces the same item, transaction and expression limits as DynamoDB.
 */
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('blobs', topic());
  await h.admin.putGroup('readers', group('blobs'));
});

/** Incompressible bytes as base64 text: stored as text, a third larger than the bytes. */
const base64Body = (bytes: number) => ({ ...send(randomBytes(bytes).toString('base64')), encoding: 'base64' as const });

describe('item size: segments are sized by stored bytes', () => {
  it('sends a batch of 3 × 116 KB base64 bodies (issue 14 item 2) and delivers each byte for byte', async () => {
    const entries = [0, 1, 2].map(() => base64Body(116 * 1024));
    const results = await h.queue.sendBatch('blobs', entries);
    expect(results.map((r) => ('error' in r ? r.error.message : r.result.state))).toEqual(['deliverable', 'deliverable', 'deliverable']);
    const got = await h.queue.receive('readers', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body).sort()).toEqual(entries.map((e) => e.body).sort());
  });

  it('sends a batch of 4 bodies of 256 KiB incompressible bytes (base64) and of 256 KiB text', async () => {
    const entries = [base64Body(256 * 1024), base64Body(256 * 1024), send('x'.repeat(256 * 1024)), send('é'.repeat(128 * 1024))];
    const results = await h.queue.sendBatch('blobs', entries);
    expect(results.every((r) => 'result' in r)).toBe(true);
    const got = await h.queue.receive('readers', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body).sort()).toEqual(entries.map((e) => e.body).sort());
  });
});
