import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { TransactionParams } from './schemas.js';

/** POST /v1/transactions/{transactionId}/rollback: the half message is discarded (first resolution wins). */
export const handler = route({ params: TransactionParams }, async ({ params }) =>
  json(200, await container().transactions.rollback(params.transactionId)),
);
