import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { PutTopicBody, TopicParams } from './schemas.js';

/** PUT /v1/topics/{topic}: create a topic, or update its retention and maximum delay, or raise its partitions. */
export const handler = route({ params: TopicParams, body: PutTopicBody }, async ({ params, body }) => {
  const { topic } = await container().admin.putTopic(params.topic, {
    type: body.type,
    retentionSeconds: body.retentionSeconds,
    maxDelaySeconds: body.maxDelaySeconds,
    orderGroup: body.orderGroup,
    partitions: body.partitions,
    sequenced: body.sequenced,
  });
  return json(200, topic);
});
