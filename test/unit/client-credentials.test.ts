/**
 * The published SDK lists @aws-sdk/credential-providers as an optional peer: a client that
 * signs with SigV4 and was given no credentials says what to install instead of failing on
 * a missing module.
 */
import { describe, expect, it, vi } from 'vitest';
import { SluiceClient, SluiceConfigurationError } from '../../lib/client/index.js';

vi.mock('@aws-sdk/credential-providers', () => {
  throw new Error("Cannot find package '@aws-sdk/credential-providers'");
});

describe('SigV4 without credentials and without @aws-sdk/credential-providers', () => {
  it('rejects with a SluiceConfigurationError naming the package, and sends nothing', async () => {
    let sent = 0;
    const client = new SluiceClient({
      endpoint: 'https://abc123.execute-api.eu-west-1.amazonaws.com',
      fetch: async () => {
        sent += 1;
        return new Response('{}', { status: 200 });
      },
    });
    const error: unknown = await client.listTopics().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SluiceConfigurationError);
    expect((error as Error).message).toMatch(/@aws-sdk\/credential-providers: install it, or pass `credentials`/);
    expect(sent).toBe(0);
  });
});
