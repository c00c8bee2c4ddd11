import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { GroupParams, SeekBody } from './schemas.js';

/** POST /v1/groups/{group}/seek: move the group's positions (earliest, latest, or a time). */
export const handler = route({ params: GroupParams, body: SeekBody }, async ({ params, body }) => {
  const to = body.to === 'earliest' || body.to === 'latest' ? body.to : Date.parse(body.to);
  return json(200, await container().seeker.seek(params.group, to, body.topics));
});
