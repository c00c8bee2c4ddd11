/**
 * Checker webhooks over node:http(s), with the SSRF guard in the DNS lookup
 * itself: the address actually connected to is the address that was checked
 * (no DNS-rebinding window), redirects are never followed, and the answer is
 * read up to 1 MiB within the timeout (a longer one is reported cut).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { addressProblem, checkerUrlProblem, type CheckerPolicy } from '../../domain/ssrf.js';
import type { WebhookClient, WebhookResponse } from '../../ports/webhooks.js';

export class RefusedAddressError extends Error {
  override readonly name = 'RefusedAddressError';
}

const MAX_ANSWER_BYTES = 1024 * 1024;

export class HttpWebhookClient implements WebhookClient {
  constructor(private readonly policy: CheckerPolicy) {}

  /** A DNS lookup that refuses the whole name if any of its addresses may not be called. */
  private readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.map((a) => addressProblem(a.address, this.policy)).find((p) => p !== undefined);
      if (refused || addresses.length === 0) {
        return callback(new RefusedAddressError(`refused: ${hostname} resolves to ${refused ?? 'nothing'}`), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };

  async vet(url: string): Promise<void> {
    const problem = checkerUrlProblem(url, this.policy);
    if (problem) throw new RefusedAddressError(`checkerUrl ${problem}`);
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    await new Promise<void>((resolve, reject) =>
      this.lookup(host, { all: true }, (error) => (error ? reject(error instanceof RefusedAddressError ? error : new RefusedAddressError(`checkerUrl host '${host}' does not resolve`)) : resolve())),
    );
  }

  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<WebhookResponse> {
    const problem = checkerUrlProblem(url, this.policy);
    if (problem) return Promise.reject(new RefusedAddressError(`checkerUrl ${problem}`));
    const target = new URL(url);
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<WebhookResponse>((resolve, reject) => {
      const req = request(
        target,
        {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
          lookup: this.lookup,
          signal: AbortSignal.timeout(timeoutMs),
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          let settled = false;
          const answer = (truncated: boolean) => {
            if (settled) return;
            settled = true;
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ...(truncated ? { truncated: true } : {}) });
          };
          res.on('data', (chunk: Buffer) => {
            if (settled) return;
            if (size + chunk.length > MAX_ANSWER_BYTES) {
              // Past what is read: answered cut at once, the rest not downloaded.
              chunks.push(chunk.subarray(0, MAX_ANSWER_BYTES - size));
              size = MAX_ANSWER_BYTES;
              answer(true);
              res.destroy();
              return;
            }
            size += chunk.length;
            chunks.push(chunk);
          });
          res.on('end', () => answer(false));
          res.on('error', (error) => (settled ? undefined : reject(error)));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}
