import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { PatchTopicBody, TopicParams } from './schemas.js';

/** PATCH /v1/topics/{topic}: change only the settings given; the others keep their values. */
export const handler = route({ params: TopicParams, body: PatchTopicBody }, async ({ params, body }) => {
  const { topic } = await container().admin.patchTopic(params.topic, {
    type: body.type,
    retentionSeconds: body.retentionSeconds,
    maxDelaySeconds: body.maxDelaySeconds,
    orderGroup: body.orderGroup,
    partitions: body.partitions,
    sequenced: body.sequenced,
  });
  return json(200, topic);
});
