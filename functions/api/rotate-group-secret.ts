import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { GroupParams } from './schemas.js';

/** POST /v1/groups/{group}/rotate-secret: a new signing secret for a push group; the old one signs along for a day. */
export const handler = route({ params: GroupParams }, async ({ params }) => json(200, await container().admin.rotatePushSecret(params.group)));
