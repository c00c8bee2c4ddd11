import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { PageQuery } from './schemas.js';

/** GET /v1/groups: consumer groups by name, paged. */
export const handler = route({ query: PageQuery }, async ({ query }) =>
  json(200, await container().admin.listGroups(query.limit, query.nextToken)),
);
