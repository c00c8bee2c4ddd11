import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { GroupParams } from './schemas.js';

/** GET /v1/groups/{group}: the group with backlog, in-flight and dead-letter statistics. */
export const handler = route({ params: GroupParams }, async ({ params }) =>
  json(200, await container().admin.getGroup(params.group)),
);
