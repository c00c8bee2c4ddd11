import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { TopicParams } from './schemas.js';

/** GET /v1/topics/{topic}: the topic with approximate counts and its subscribers. */
export const handler = route({ params: TopicParams }, async ({ params }) =>
  json(200, await container().admin.getTopic(params.topic)),
);
