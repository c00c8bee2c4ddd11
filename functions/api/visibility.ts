import { container } from '../commons/container.js';
import { noContent, route } from '../commons/http.js';
import { GroupParams, VisibilityBody } from './schemas.js';

/** POST /v1/groups/{group}/visibility: extend a lease, or release it now with 0. */
export const handler = route({ params: GroupParams, body: VisibilityBody }, async ({ params, body }) => {
  await container().queue.changeVisibility(params.group, body.receiptHandle, body.visibilityTimeoutSeconds, body.attempted === false);
  return noContent();
});
