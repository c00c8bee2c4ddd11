/** A request's body, read whole up to a limit: the SDK's webhook endpoints, and (imported from here, the one copy) the local gateway and `sluice console`. */
import type { IncomingMessage } from 'node:http';

/**
 * The body's bytes, or `'too-large'` as soon as it passes `maxBytes` (declared or sent): the rest
 * is drained unread, so the connection can still carry the answer.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBytes) return resolve('too-large');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners('data');
        req.resume();
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
