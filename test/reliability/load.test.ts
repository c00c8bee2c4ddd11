/**
 * Load (issue 9): concurrent producers and consumers over HTTP against an
 * in-process runtime for a bounded time (2 minutes full, 20 s in CI). Every
 * request succeeds (429/503 are retried and counted), every message sent is
 * received and committed once, and the heap after garbage collection stays
 * flat: its growth from the first to the last third of the run is bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { startRuntime, TOKEN } from '../helpers/local.js';
import { Http, SCALE, percentile, scaled, sleep } from './support.js';

const SECONDS = Number(process.env.SLUICE_LOAD_SECONDS ?? scaled(120, 20));
const PRODUCERS = 4;
const CONSUMERS = 4;
let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await startRuntime();
});
afterAll(async () => runtime?.stop());

const gc = (globalThis as { gc?: () => void }).gc;
const heapMiB = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};

describe(`load (${SCALE}: ${SECONDS} s)`, () => {
  it('serves sustained concurrent producers and consumers without errors, losses or heap growth', async () => {
    const http = new Http(runtime.url, TOKEN);
    await http.call('PUT', '/v1/topics/std', { type: 'standard' });
    await http.call('PUT', '/v1/topics/fifo', { type: 'fifo' });
    await http.call('PUT', '/v1/groups/g-std', { subscriptions: [{ topic: 'std' }], visibilityTimeoutSeconds: 30 });
    await http.call('PUT', '/v1/groups/g-fifo', { subscriptions: [{ topic: 'fifo' }], deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 });

    const sent = { std: 0, fifo: 0 };
    const ids = new Map<string, { topic: 'std' | 'fifo'; messageId: string; sequence?: number }>();
    const received = { std: new Set<string>(), fifo: new Set<string>() };
    const duplicates = { std: 0, fifo: 0 };
    const latencies: number[] = [];
    const errors: string[] = [];
    const heap: Array<{ t: number; mib: number }> = [];
    const started = Date.now();
    const end = started + SECONDS * 1000;
    let producing = true;

    const timed = async <T>(op: () => Promise<T>) => {
      const t0 = performance.now();
      const result = await op();
      latencies.push(performance.now() - t0);
      return result;
    };

    const producer = async (p: number) => {
      for (let i = 0; Date.now() < end && i < 1_000_000; i++) {
        const fifo = i % 2 === 1;
        const size = i % 5 === 0 ? 1 : 20;
        const entries = Array.from({ length: size }, (_, j) => ({
          body: `p${p}-${i}-${j}-${'x'.repeat(200)}`,
          dedupId: `p${p}-${i}-${j}`,
          ...(fifo ? { shardKey: `k${(p * 7 + j) % 16}` } : {}),
          keys: [`order-${p}-${i}`],
        }));
        const topic = fifo ? 'fifo' : 'std';
        const res = size === 1
          ? await timed(() => http.call('POST', `/v1/topics/${topic}/messages`, entries[0]))
          : await timed(() => http.call('POST', `/v1/topics/${topic}/messages/batch`, { entries }));
        if (res.status !== 200 && res.status !== 201) errors.push(`send ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        else if (size > 1 && res.body.results.some((r: { error?: unknown }) => r.error)) {
          // The refused entries' errors, not the first accepted ones.
          const refused = res.body.results.filter((r: { error?: unknown }) => r.error);
          errors.push(`batch entry refused (${topic}, ${refused.length} of ${size}): ${JSON.stringify(refused).slice(0, 400)}`);
        }
        else {
          sent[topic] += size;
          const results = size === 1 ? [res.body] : res.body.results;
          entries.forEach((e, j) => ids.set(e.dedupId, { topic, messageId: results[j].messageId, sequence: results[j].sequence }));
        }
      }
    };

    const consumer = async (group: 'g-std' | 'g-fifo') => {
      const key = group === 'g-std' ? 'std' : 'fifo';
      for (let i = 0; i < 1_000_000; i++) {
        if (!producing && received[key].size >= sent[key]) return;
        if (Date.now() > end + 120_000) return;
        const res = await timed(() => http.call('POST', `/v1/groups/${group}/receive`, { maxMessages: 20, waitSeconds: 1 }));
        if (res.status !== 200) {
          errors.push(`receive ${res.status}`);
          continue;
        }
        const messages = res.body.messages as Array<{ body: string; receiptHandle: string }>;
        if (messages.length === 0) continue;
        for (const m of messages) {
          const id = m.body.slice(0, m.body.indexOf('-x'));
          if (received[key].has(id)) duplicates[key]++;
          received[key].add(id);
        }
        const c = await timed(() => http.call('POST', `/v1/groups/${group}/commit`, { entries: messages.map((m) => ({ receiptHandle: m.receiptHandle })) }));
        if (c.status !== 200 || c.body.results.some((r: { error?: unknown }) => r.error)) errors.push(`commit ${c.status} ${JSON.stringify(c.body).slice(0, 200)}`);
      }
    };

    const sampler = (async () => {
      while (producing) {
        heap.push({ t: (Date.now() - started) / 1000, mib: heapMiB() });
        await sleep(Math.max(1000, (SECONDS * 1000) / 30));
      }
    })();

    const consumers = [
      ...Array.from({ length: CONSUMERS / 2 }, () => consumer('g-std')),
      ...Array.from({ length: CONSUMERS / 2 }, () => consumer('g-fifo')),
    ];
    await Promise.all(Array.from({ length: PRODUCERS }, (_, p) => producer(p)));
    producing = false;
    await sampler;
    await Promise.all(consumers);

    // Flat: the median heap of the last third is within 30% (and 40 MiB) of the median of the first third.
    const third = Math.max(1, Math.floor(heap.length / 3));
    const early = percentile(heap.slice(0, third).map((h) => h.mib), 50);
    const late = percentile(heap.slice(-third).map((h) => h.mib), 50);
    const figures = {
      seconds: SECONDS,
      sent: sent.std + sent.fifo,
      received: received.std.size + received.fifo.size,
      duplicates: duplicates.std + duplicates.fifo,
      requests: http.counters.requests,
      answered429or503: http.counters.retryable,
      p50ms: Math.round(percentile(latencies, 50)),
      p99ms: Math.round(percentile(latencies, 99)),
      heapMiB: { early: Math.round(early), late: Math.round(late), min: Math.round(Math.min(...heap.map((h) => h.mib))), max: Math.round(Math.max(...heap.map((h) => h.mib))), samples: heap.length, gc: gc !== undefined },
    };
    console.log(`load report: ${JSON.stringify(figures)}`);
    const missing = [...ids].filter(([id, m]) => !received[m.topic].has(id));
    for (const [id, m] of missing.slice(0, 10)) {
      const view = (await http.call('GET', `/v1/topics/${m.topic}/messages/${m.messageId}`)).body;
      console.log(`load: not received ${id} ${JSON.stringify(m)} → ${JSON.stringify({ state: view.state, shardKey: view.shardKey, sequence: view.sequence, groups: view.groups })}`);
    }
    if (missing.length) for (const group of ['g-std', 'g-fifo']) console.log(`load: ${group} ${JSON.stringify((await http.call('GET', `/v1/groups/${group}`)).body)}`);
    expect(errors.slice(0, 10)).toEqual([]);
    expect(http.counters.serverErrors).toEqual([]);
    expect(received.std.size).toBe(sent.std);
    expect(received.fifo.size).toBe(sent.fifo);
    // Behaviour, not speed (figures come from npm run bench): both topics carried real traffic.
    expect(Math.min(sent.std, sent.fifo)).toBeGreaterThan(20);
    for (const group of ['g-std', 'g-fifo']) {
      const stats = (await http.call('GET', `/v1/groups/${group}`)).body;
      expect(stats, group).toMatchObject({ backlog: 0, inFlight: 0, pending: 0 });
      expect(stats.committed, group).toBe(group === 'g-std' ? sent.std : sent.fifo);
    }
    expect(late - early, `heap grew from ${early.toFixed(1)} to ${late.toFixed(1)} MiB`).toBeLessThan(Math.max(40, early * 0.3));
  }, 15 * 60_000);
});
