import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface DynamoConnection {
  endpoint?: string | undefined;
  region?: string | undefined;
  /** Per-attempt request timeout; keeps a stalled call far below the minimum retention (docs/design.md). */
  requestTimeoutMs?: number;
  maxAttempts?: number;
}

/** Builds the low-level and document clients once per container. */
export function createDynamoClients(connection: DynamoConnection): { client: DynamoDBClient; doc: DynamoDBDocumentClient } {
  const config: DynamoDBClientConfig = {
    region: connection.region ?? 'us-east-1',
    maxAttempts: connection.maxAttempts ?? 3,
    requestHandler: { requestTimeout: connection.requestTimeoutMs ?? 5000, connectionTimeout: 2000 },
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
