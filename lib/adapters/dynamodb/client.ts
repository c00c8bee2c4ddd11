import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface DynamoConnection {
  endpoint?: string | undefined;
  region?: string | undefined;
  /** Per-attempt request timeout; keeps a stalled call far below the minimum retention (docs/design.md). */
  requestTimeoutMs?: number;
  maxAttempts?: number;
}

/** Attempts of one request, the SDK's retries included (each a connection of ≤ 2 s and a request of ≤ 5 s). */
export const DYNAMO_MAX_ATTEMPTS = 3;
export const DYNAMO_REQUEST_TIMEOUT_MS = 5000;
export const DYNAMO_CONNECTION_TIMEOUT_MS = 2000;

/** Builds the low-level and document clients once per container. */
export function createDynamoClients(connection: DynamoConnection): { client: DynamoDBClient; doc: DynamoDBDocumentClient } {
  const config: DynamoDBClientConfig = {
    region: connection.region ?? 'us-east-1',
    maxAttempts: connection.maxAttempts ?? DYNAMO_MAX_ATTEMPTS,
    requestHandler: { requestTimeout: connection.requestTimeoutMs ?? DYNAMO_REQUEST_TIMEOUT_MS, connectionTimeout: DYNAMO_CONNECTION_TIMEOUT_MS },
  };
  if (connection.endpoint) {
    config.endpoint = connection.endpoint;
    // DynamoDB Local accepts any credentials; never fall back to a developer's real ones.
    config.credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  }
  const client = new DynamoDBClient(config);
  const doc = DynamoDBDocumentClient.from(client, {
    // convertClassInstanceToMap: a message's properties may carry the key `constructor` (SPEC §3); the marshaller
    // tells plain objects by `value.constructor.name` and would refuse that map as an unsupported type.
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false, convertClassInstanceToMap: true },
  });
  return { client, doc };
}
