/**
 * Which pull groups are parked on a topic's doorbell, for the dispatcher's doorbell route: the
 * topic item's `wb` map, from the container's catalog cache (the same cached topic reads the push
 * route makes: one read per topic per `SLUICE_CATALOG_CACHE_MS` serves both routes, instead of a
 * consistent read per flagged topic per invocation — up to ~70 RRU at the limits, `pg` + `wb`).
 *
 * Why a cached read loses no wake-up (docs/design.md, "Waking SDK consumers"): a group that parked
 * at `p` answers its doorbell only after a look at `p + C + 1 s` (C = the catalog cache, the same
 * for senders and dispatchers), so everything appended before then is found by that look. A segment
 * appended at `t > p + C + 1 s` reaches a dispatcher invocation at `d ≥ t`, whose cached topic item
 * was read at `≥ d − C > p + 1 s` (a consistent read): after the park, so the group is in it.
 */
import type { Catalog } from './catalog.js';
import type { ParkedGroups } from '../../ports/doorbell.js';

export class TopicDoorbellGroups implements ParkedGroups {
  constructor(private readonly catalog: Pick<Catalog, 'topic'>) {}

  async parkedOn(topic: string, now: number): Promise<readonly string[]> {
    const item = await this.catalog.topic(topic);
    return Object.entries(item?.doorbellGroups ?? {})
      .filter(([, until]) => until > now)
      .map(([group]) => group);
  }
}
