/**
 * Append contention per topic, counted per container (docs/design.md, "Append contention
 * metrics"). Every append a container makes is counted on its stream's topic: landed, races lost
 * (a failed segment put: another writer took the number) and answered 429 Throttled. At most once
 * a window (60 s) the figures of the topics that had a lost race or a 429 are taken — on AWS the
 * HTTP edge writes them as the `AppendLostRaces`, `Appends` and `AppendsThrottled` metrics (EMF,
 * dimension `Topic`): the signal to raise a standard topic's partitions (docs/performance.md,
 * Scale). A window without contention takes nothing, so an uncontended or idle topic costs no
 * log bytes and no metric hours.
 */
import { isNoticeStream, isRedriveStream, namespaceOf } from '../domain/streams.js';
import type { AppendObserver } from '../ports/append-observer.js';
import type { Clock } from '../ports/clock.js';

/** How often (at most) a container writes its figures. */
export const APPEND_METRICS_WINDOW_MS = 60_000;
/** Topics counted per window (a window's first ones; appends on others are not counted in it). */
export const TOPICS_COUNTED = 1000;

/** One topic's figures over a window. */
export interface AppendFigures {
  /** The topic's name, or `order-group:<name>` for the streams a time-order group's topics share. */
  topic: string;
  appends: number;
  lostRaces: number;
  throttled: number;
}

/**
 * The dimension value of a stream's topic; undefined for streams that carry no messages of it or
 * that no user tunes: a FIFO topic's notice streams (written after the shard segments they
 * announce; counting them would count every FIFO send twice) and a group's redrive stream.
 */
export function topicOfStream(stream: string): string | undefined {
  if (isRedriveStream(stream) || isNoticeStream(stream)) return undefined;
  const namespace = namespaceOf(stream);
  if (namespace.startsWith('t:')) return namespace.slice(2);
  if (namespace.startsWith('o:')) return `order-group:${namespace.slice(2)}`;
  return undefined;
}

export class AppendMeter {
  private counts = new Map<string, Omit<AppendFigures, 'topic'>>();
  private since: number;

  constructor(private readonly clock: Clock) {
    this.since = clock.now();
  }

  /** Counts one append on the topics of its streams (each topic once). */
  readonly record: AppendObserver = (streams, outcome) => {
    for (const topic of new Set(streams.map(topicOfStream))) {
      if (topic === undefined) continue;
      let figures = this.counts.get(topic);
      if (!figures) {
        if (this.counts.size >= TOPICS_COUNTED) continue;
        figures = { appends: 0, lostRaces: 0, throttled: 0 };
        this.counts.set(topic, figures);
      }
      if (outcome.landed) figures.appends++;
      figures.lostRaces += outcome.lost;
      if (outcome.throttled) figures.throttled++;
    }
  };

  /**
   * Once the window is over: the figures of the topics that lost a race or answered 429 in it
   * (counting starts again); undefined while the window lasts or when nothing was contended.
   */
  take(): AppendFigures[] | undefined {
    const now = this.clock.now();
    if (now - this.since < APPEND_METRICS_WINDOW_MS) return undefined;
    const contended = [...this.counts].filter(([, f]) => f.lostRaces > 0 || f.throttled > 0).map(([topic, f]) => ({ topic, ...f }));
    this.counts = new Map();
    this.since = now;
    return contended.length > 0 ? contended : undefined;
  }
}
