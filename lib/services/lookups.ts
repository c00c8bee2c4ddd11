/** Catalog look-ups every queue operation starts with: a missing topic or group is a 404. */
import { GroupNotFoundError, TopicNotFoundError } from '../domain/errors.js';
import type { Group, Topic } from '../domain/model.js';
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

