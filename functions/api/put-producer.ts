import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { ProducerParams, PutProducerBody } from './schemas.js';

/** PUT /v1/producers/{producerGroup}: create (answers the signing secret, once) or update a producer group. */
export const handler = route({ params: ProducerParams, body: PutProducerBody }, async ({ params, body }) =>
  json(
    200,
    await container().transactions.putProducer(params.producerGroup, {
      checkerUrl: body.checkerUrl,
      checkIntervalSeconds: body.checkIntervalSeconds,
      maxChecks: body.maxChecks,
      onMaxChecks: body.onMaxChecks,
    }),
  ),
);
