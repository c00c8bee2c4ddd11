/**
 * AWS Signature Version 4 for a deployed Sluice stack: its Lambda function URL
 * with AWS_IAM auth (signing service `lambda`) or its HTTP API with IAM
 * authorization (signing service `execute-api`).
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { SluiceConfigurationError } from './errors.js';

/** AWS credentials (structurally the SDK's `AwsCredentialIdentity`). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** Returns credentials; the SDK's providers (`fromNodeProviderChain()`, …) are of this shape and cache them. */
export type AwsCredentialsProvider = () => Promise<AwsCredentials>;

export interface SigningRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | undefined;
}

export interface SigV4Options {
  region: string;
  credentials: AwsCredentials | AwsCredentialsProvider;
  /** Signing name of the service: `lambda` (function URL) or `execute-api` (HTTP API, the default). */
  service?: string;
}

/** A signer for `fetch` requests: returns the headers to send (signed), `host` excluded (fetch sets it). */
export class SigV4Signer {
  private readonly signer: SignatureV4;

  constructor(options: SigV4Options) {
    if (!options.region) throw new SluiceConfigurationError('SigV4 signing needs an AWS region: pass `region`.');
    this.signer = new SignatureV4({
      service: options.service ?? 'execute-api',
      region: options.region,
      credentials: options.credentials,
      sha256: Sha256,
    });
  }

  async sign(request: SigningRequest, signingDate?: Date): Promise<Record<string, string>> {
    const query: Record<string, string | string[]> = {};
    for (const [name, value] of request.url.searchParams) {
      const seen = query[name];
      query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    }
    const signed = await this.signer.sign(
      {
        method: request.method,
        protocol: request.url.protocol,
        hostname: request.url.hostname,
        ...(request.url.port ? { port: Number(request.url.port) } : {}),
        // The URL's path is already percent-encoded; the signer encodes each segment once more, as SigV4 wants for every service but S3.
        path: request.url.pathname,
        query,
        headers: { ...request.headers, host: request.url.host },
        ...(request.body !== undefined ? { body: request.body } : {}),
      },
      signingDate ? { signingDate } : {},
    );
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) {
      if (name.toLowerCase() !== 'host') headers[name] = String(value);
    }
    return headers;
  }
}
