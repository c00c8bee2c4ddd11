import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { PageQuery } from './schemas.js';

/** GET /v1/producers: producer groups by name, paged (never their secrets). */
export const handler = route({ query: PageQuery }, async ({ query }) =>
  json(200, await container().transactions.listProducers(query.limit, query.nextToken)),
);
