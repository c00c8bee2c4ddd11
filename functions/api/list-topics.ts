import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { PageQuery } from './schemas.js';

/** GET /v1/topics: topics by name, paged with `limit` and `nextToken`. */
export const handler = route({ query: PageQuery }, async ({ query }) =>
  json(200, await container().admin.listTopics(query.limit, query.nextToken)),
);
