import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { TOPIC_METRICS } from '../../lib/adapters/aws/names.js';
import type { AppendFigures } from '../../lib/services/append-meter.js';

/**
 * The per-topic append contention metrics (namespace `Sluice`, dimension `Topic`, read by the
 * construct's `metricAppendLostRaces(topic)` and friends): one EMF document per topic in the
 * function's log. Called with what the container's AppendMeter took (only topics that lost a race
 * or answered 429 within its window), so an uncontended or idle topic writes nothing.
 */
export function emitAppendContention(figures: readonly AppendFigures[]): void {
  for (const f of figures) {
    const metrics = new Metrics({ namespace: TOPIC_METRICS.namespace });
    metrics.clearDefaultDimensions();
    metrics.addDimension(TOPIC_METRICS.dimension, f.topic);
    metrics.addMetric(TOPIC_METRICS.appends, MetricUnit.Count, f.appends);
    metrics.addMetric(TOPIC_METRICS.lostRaces, MetricUnit.Count, f.lostRaces);
    metrics.addMetric(TOPIC_METRICS.throttled, MetricUnit.Count, f.throttled);
    metrics.publishStoredMetrics();
  }
}
