/**
 * Which pull groups are parked on a topic's doorbell, for the dispatcher's
 * doorbell route: the topic item's `wb` map, read consistently once per topic
 * per invocation (1 RRU for an item under 4 KB). Not from the catalog cache: a
 * group that parked after the cached read would never be rung, and its
 * consumer would sleep until its 5-minute receive.
 */
import type { Catalog } from './catalog.js';
import type { ParkedGroups } from '../../ports/doorbell.js';

export class TopicDoorbellGroups implements ParkedGroups {
  constructor(private readonly catalog: Pick<Catalog, 'getTopic'>) {}

  async parkedOn(topic: string, now: number): Promise<readonly string[]> {
    const item = await this.catalog.getTopic(topic);
    return Object.entries(item?.doorbellGroups ?? {})
      .filter(([, until]) => until > now)
      .map(([group]) => group);
  }
}
