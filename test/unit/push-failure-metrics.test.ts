/** The push worker's PushFailures metric: one EMF document per call, namespace Sluice, dimension Group only. */
import { describe, expect, it } from 'vitest';
import { emfDocuments } from '../helpers/emf.js';
import { GROUP_METRICS } from '../../lib/adapters/aws/names.js';
import { emitPushFailures } from '../../functions/commons/push-failure-metrics.js';

describe('emitPushFailures', () => {
  it('writes one EMF document with the group as its only dimension', () => {
    const docs = emfDocuments(() => {
      emitPushFailures('billing.eu', { failedRequests: 3 });
    });
    expect(docs).toHaveLength(1);
    const [directive] = docs[0]!._aws.CloudWatchMetrics;
    expect(directive).toMatchObject({ Namespace: GROUP_METRICS.namespace, Dimensions: [['Group']], Metrics: [{ Name: 'PushFailures', Unit: 'Count' }] });
    expect(docs[0]).toMatchObject({ Group: 'billing.eu', PushFailures: 3 });
    expect(docs[0]).not.toHaveProperty('service');
  });
});
