import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { KeyQuery, TopicParams } from './schemas.js';

/** GET /v1/topics/{topic}/messages?key=K: messages carrying key K, newest first. */
export const handler = route({ params: TopicParams, query: KeyQuery }, async ({ params, query }) => {
  const page = await container().queue.messagesByKey(params.topic, query.key, query.limit, query.nextToken);
  return json(200, { messages: page.messages, nextToken: page.nextToken ?? null });
});
