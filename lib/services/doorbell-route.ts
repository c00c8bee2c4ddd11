/**
 * The dispatcher's `wake` route that rings pull groups' doorbells: for the
 * topics of the invocation's flagged segments, the groups parked on them,
 * each rung once per invocation however many segments name it (design
 * "Waking SDK consumers"). Segments whose topics' groups could not be rung
 * (or whose parked groups could not be read) are answered as failed, so the
 * event source retries them.
 */
import type { SegmentChange } from '../adapters/dynamodb/segment-changes.js';
import type { Doorbell, ParkedGroups } from '../ports/doorbell.js';
import type { DispatchLog, DispatchRoute } from './dispatcher.js';

export class DoorbellRoute implements DispatchRoute {
  readonly name = 'doorbell';

  constructor(
    private readonly parked: ParkedGroups,
    private readonly doorbell: Doorbell,
    private readonly log?: DispatchLog,
  ) {}

  async handle(segments: readonly SegmentChange[], now: number): Promise<readonly string[]> {
    const segmentsOf = new Map<string, string[]>();
    for (const segment of segments) {
      for (const topic of segment.topics) segmentsOf.set(topic, [...(segmentsOf.get(topic) ?? []), segment.id]);
    }
    const failed = new Set<string>();
    const topicsOfGroup = new Map<string, string[]>();
    await Promise.all(
      [...segmentsOf.keys()].map(async (topic) => {
        try {
          for (const group of await this.parked.parkedOn(topic, now)) topicsOfGroup.set(group, [...(topicsOfGroup.get(group) ?? []), topic]);
        } catch (error) {
          this.log?.error('parked groups read failed', { topic, error });
          for (const id of segmentsOf.get(topic) ?? []) failed.add(id);
        }
      }),
    );
    if (topicsOfGroup.size > 0) {
      let unrung: readonly string[];
      try {
        unrung = await this.doorbell.ring([...topicsOfGroup.keys()]);
      } catch (error) {
        this.log?.error('doorbell ring failed', { groups: topicsOfGroup.size, error });
        unrung = [...topicsOfGroup.keys()];
      }
      for (const group of unrung) {
        for (const topic of topicsOfGroup.get(group) ?? []) for (const id of segmentsOf.get(topic) ?? []) failed.add(id);
      }
    }
    return [...failed];
  }
}
