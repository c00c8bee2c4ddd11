import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { GROUP_METRICS } from '../../lib/adapters/aws/names.js';

/**
 * The push worker's per-group `PushFailures` metric (namespace `Sluice`, dimension `Group`, as the
 * group-metrics function's figures, so the construct's `metricPushFailures(group)` finds it): one
 * EMF document in the worker's log per drain that had failed requests. A drain without failures
 * writes nothing, so a healthy or idle group costs no log bytes and no metric hours.
 */
export function emitPushFailures(group: string, figures: { failedRequests: number }): void {
  const metrics = new Metrics({ namespace: GROUP_METRICS.namespace });
  metrics.clearDefaultDimensions();
  metrics.addDimension(GROUP_METRICS.dimension, group);
  metrics.addMetric(GROUP_METRICS.pushFailures, MetricUnit.Count, figures.failedRequests);
  metrics.publishStoredMetrics();
}
