import middy from '@middy/core';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { GROUP_METRICS } from '../../lib/adapters/aws/names.js';
import { container } from '../commons/container.js';

/**
 * Recurring (every minute): every consumer group's backlog, oldest message age, messages in
 * flight and dead letters as CloudWatch metrics (EMF lines in the function's log; dimension
 * `Group` only, so the construct's `metricBacklog(group)` finds them).
 */
export const handler = middy().handler(async () => {
  const metrics = new Metrics({ namespace: GROUP_METRICS.namespace });
  metrics.clearDefaultDimensions();
  // Published group by group as the figures come (a run its time-out cuts short keeps what it wrote).
  const figures = await container().admin.groupFigures({
    each: (f) => {
      metrics.addDimension(GROUP_METRICS.dimension, f.group);
      metrics.addMetric(GROUP_METRICS.backlog, MetricUnit.Count, f.backlog);
      metrics.addMetric(GROUP_METRICS.oldestMessageAge, MetricUnit.Seconds, f.oldestMessageAgeSeconds);
      metrics.addMetric(GROUP_METRICS.inFlight, MetricUnit.Count, f.inFlight);
      metrics.addMetric(GROUP_METRICS.deadLettered, MetricUnit.Count, f.deadLettered);
      // One EMF document per group: a document has one dimension set.
      metrics.publishStoredMetrics();
    },
  });
  return { groups: figures.length };
});
