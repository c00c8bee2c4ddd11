import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { ProducerParams } from './schemas.js';

/** GET /v1/producers/{producerGroup}: the producer group (never its secret). */
export const handler = route({ params: ProducerParams }, async ({ params }) =>
  json(200, await container().transactions.getProducer(params.producerGroup)),
);
