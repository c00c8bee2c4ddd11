/**
 * The DynamoDB Local a test file talks to: its own when the suite gives every file one
 * (test/helpers/dynamo-per-file.ts: the main suite's files with tables, the reliability suite),
 * otherwise the one the whole run shares (test/helpers/global-setup.ts: the package test).
 */
import { inject } from 'vitest';

export const PER_FILE_ENDPOINT = 'SLUICE_TEST_DYNAMODB_ENDPOINT';

export function dynamoEndpoint(): string {
  const endpoint = process.env[PER_FILE_ENDPOINT] || inject('dynamoEndpoint');
  // Without one the SDK would look for real AWS credentials and a real table.
  if (!endpoint) throw new Error('No DynamoDB Local for this file yet: call dynamoEndpoint() in a hook or test, not at import (test/helpers/dynamo-per-file.ts).');
  return endpoint;
}
