/** Catalog look-ups: a missing topic or group is a 404; a missing dead-letter topic is created. */
import { GroupNotFoundError, TopicNotFoundError } from '../domain/errors.js';
import { Limits, type Group, type Topic } from '../domain/model.js';
import type { Stores } from './stores.js';

export async function requireTopic(stores: Pick<Stores, 'catalog'>, name: string): Promise<Topic> {
  const topic = await stores.catalog.topic(name);
  if (!topic) throw new TopicNotFoundError(name);
  return topic;
}

export async function requireGroup(stores: Pick<Stores, 'catalog'>, name: string): Promise<Group> {
  const group = await stores.catalog.group(name);
  if (!group) throw new GroupNotFoundError(name);
  return group;
}


/**
 * A group's dead-letter topic (standard, longest retention), created when
 * missing: with the group, and again by a dead letter if someone deleted it.
 */
export async function ensureDeadLetterTopic(stores: Pick<Stores, 'catalog'>, name: string, now: number): Promise<Topic> {
  const existing = await stores.catalog.getTopic(name);
  if (existing) return existing;
  const { topic } = await stores.catalog.putTopic(
    {
      name,
      type: 'standard',
      retentionSeconds: Limits.retentionMaxSeconds,
      maxDelaySeconds: Limits.maxDelayDefaultSeconds,
      orderGroup: undefined,
      partitions: Limits.standardPartitions,
    },
    now,
  );
  return topic;
}
