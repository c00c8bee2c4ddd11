/** KMS sealing of producer signing secrets (encryption context binds a secret to its producer group). */
import { DecryptCommand, EncryptCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { SecretBox } from '../../ports/webhooks.js';

export class KmsSecretBox implements SecretBox {
  constructor(
    private readonly client: KMSClient,
    private readonly keyId: string,
  ) {}

  async seal(plain: string, context: Record<string, string>): Promise<string> {
    const { CiphertextBlob } = await this.client.send(
      new EncryptCommand({ KeyId: this.keyId, Plaintext: Buffer.from(plain, 'utf8'), EncryptionContext: context }),
    );
    return `kms:${Buffer.from(CiphertextBlob ?? new Uint8Array()).toString('base64')}`;
  }

  async open(sealed: string, context: Record<string, string>): Promise<string> {
    const { Plaintext } = await this.client.send(
      new DecryptCommand({ KeyId: this.keyId, CiphertextBlob: Buffer.from(sealed.replace(/^kms:/, ''), 'base64'), EncryptionContext: context }),
    );
    return Buffer.from(Plaintext ?? new Uint8Array()).toString('utf8');
  }
}
