import { container } from '../commons/container.js';
import { noContent, route } from '../commons/http.js';
import { GroupParams } from './schemas.js';

/** DELETE /v1/groups/{group}: the group, its positions and leases are gone; its dead-letter topic stays. */
export const handler = route({ params: GroupParams }, async ({ params }) => {
  await container().admin.deleteGroup(params.group);
  return noContent();
});
