import type middy from '@middy/core';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { TOPIC_METRICS } from '../../lib/adapters/aws/names.js';
import type { AppendFigures, AppendMeter } from '../../lib/services/append-meter.js';

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

interface WarnLogger {
  warn(message: string, extra: { error: Error }): void;
}

/**
 * Writes what the container's meter took, if its window is over and a topic was contended: at most
 * once a minute per container. Statistics: a failure here is logged and never replaces the
 * invocation's own result.
 */
export function flushAppendContention(meter: Pick<AppendMeter, 'take'>, logger: WarnLogger): void {
  try {
    const contended = meter.take();
    if (contended) emitAppendContention(contended);
  } catch (error) {
    logger.warn('append contention metrics not written', { error: error as Error });
  }
}

/**
 * The same flush after every invocation of a function that is not behind the HTTP edge (release,
 * timer and check sweeps, the check worker, the dispatcher, the push worker): they append too
 * (releases, check-back commits, dead letters, notices), and their contention would otherwise be
 * counted and never written. Runs after a failed invocation as well.
 */
export function appendContentionMetrics(meter: () => Pick<AppendMeter, 'take'>, logger: () => WarnLogger): middy.MiddlewareObj {
  const flush = async () => {
    // The container itself may fail to build (a bad configuration): the invocation's own error stands.
    try {
      flushAppendContention(meter(), logger());
    } catch (error) {
      console.warn('append contention metrics not written', error instanceof Error ? error.message : String(error));
    }
  };
  return { after: flush, onError: flush };
}
