/** The push worker's PushFailures metric: one EMF document per call, namespace Sluice, dimension Group only. */
import { describe, expect, it, vi } from 'vitest';
import { GROUP_METRICS } from '../../lib/adapters/aws/names.js';
import { emitPushFailures } from '../../functions/commons/push-failure-metrics.js';

describe('emitPushFailures', () => {
  it('writes one EMF document with the group as its only dimension', () => {
    const lines: string[] = [];
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
    const logs = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    try {
      emitPushFailures('billing.eu', { failedRequests: 3 });
    } finally {
      out.mockRestore();
      logs.mockRestore();
    }
    const docs = lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l) as Record<string, any>);
    expect(docs).toHaveLength(1);
    const [directive] = docs[0]!._aws.CloudWatchMetrics;
    expect(directive).toMatchObject({ Namespace: GROUP_METRICS.namespace, Dimensions: [['Group']], Metrics: [{ Name: 'PushFailures', Unit: 'Count' }] });
    expect(docs[0]).toMatchObject({ Group: 'billing.eu', PushFailures: 3 });
    expect(docs[0]).not.toHaveProperty('service');
  });
});
