import { container } from '../commons/container.js';
import { noContent, route } from '../commons/http.js';
import { ProducerParams } from './schemas.js';

/** DELETE /v1/producers/{producerGroup}: 204, or 409 ProducerInUse while it has unresolved half messages. */
export const handler = route({ params: ProducerParams }, async ({ params }) => {
  await container().transactions.deleteProducer(params.producerGroup);
  return noContent();
});
