import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { TransactionParams } from './schemas.js';

/** GET /v1/transactions/{transactionId}: its state and every check-back made. */
export const handler = route({ params: TransactionParams }, async ({ params }) =>
  json(200, await container().transactions.get(params.transactionId)),
);
