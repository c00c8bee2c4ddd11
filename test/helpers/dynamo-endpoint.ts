/**
 * The DynamoDB Local a test file talks to: its own when the suite gives every file one
 * (test/helpers/dynamo-per-file.ts, the reliability suite), otherwise the one the whole run shares
 * (test/helpers/global-setup.ts).
 */
import { inject } from 'vitest';

export const PER_FILE_ENDPOINT = 'SLUICE_TEST_DYNAMODB_ENDPOINT';

export function dynamoEndpoint(): string {
  return process.env[PER_FILE_ENDPOINT] || inject('dynamoEndpoint');
}
