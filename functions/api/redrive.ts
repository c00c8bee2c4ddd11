import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { GroupParams, RedriveBody } from './schemas.js';

/** POST /v1/groups/{group}/redrive: this group's dead letters come back to it (docs/design.md, Redrive). */
export const handler = route({ params: GroupParams, body: RedriveBody }, async ({ params, body }) =>
  json(200, await container().redriver.redrive(params.group, body.maxMessages)),
);
