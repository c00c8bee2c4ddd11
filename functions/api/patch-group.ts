import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { GroupParams, PatchGroupBody } from './schemas.js';

/** PATCH /v1/groups/{group}: change only the settings given; the others keep their values. */
export const handler = route({ params: GroupParams, body: PatchGroupBody }, async ({ params, body }) => {
  const { group } = await container().admin.patchGroup(params.group, {
    subscriptions: body.subscriptions?.map((s) => ({ topic: s.topic, tags: s.tags, startFrom: s.startFrom })),
    deliveryMode: body.deliveryMode,
    visibilityTimeoutSeconds: body.visibilityTimeoutSeconds,
    maxDeliveries: body.maxDeliveries,
    retryPolicy: body.retryPolicy,
    deadLetterTopic: body.deadLetterTopic,
    push: body.push,
  });
  return json(200, group);
});
