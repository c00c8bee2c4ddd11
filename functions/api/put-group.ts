import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { GroupParams, PutGroupBody } from './schemas.js';

/** PUT /v1/groups/{group}: create or update a consumer group and its subscriptions. */
export const handler = route({ params: GroupParams, body: PutGroupBody }, async ({ params, body }) => {
  const { group } = await container().admin.putGroup(params.group, {
    subscriptions: body.subscriptions.map((s) => ({ topic: s.topic, tags: s.tags, startFrom: s.startFrom })),
    deliveryMode: body.deliveryMode,
    visibilityTimeoutSeconds: body.visibilityTimeoutSeconds,
    maxDeliveries: body.maxDeliveries,
    retryPolicy: body.retryPolicy,
    deadLetterTopic: body.deadLetterTopic,
    push: body.push,
  });
  return json(200, group);
});
