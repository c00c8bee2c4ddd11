/** The console's files as served: bytes, gzip-compressed bytes, type and entity tag per path. */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { ConsoleSources } from './build.js';

export interface ConsoleAsset {
  body: Buffer;
  gzip: Buffer;
  type: string;
  etag: string;
}

export interface ConsoleAssets {
  /** By URL path: /console, /console/app.js, /console/app.css. */
  files: ReadonlyMap<string, ConsoleAsset>;
  /** Bytes of the three files gzip-compressed, as a browser loads them. */
  gzipBytes: number;
}

function asset(text: string, type: string): ConsoleAsset {
  const body = Buffer.from(text, 'utf8');
  return { body, gzip: gzipSync(body, { level: 9 }), type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

export function assetsFrom(sources: ConsoleSources): ConsoleAssets {
  const files = new Map([
    ['/console', asset(sources.html, 'text/html; charset=utf-8')],
    ['/console/app.js', asset(sources.js, 'text/javascript; charset=utf-8')],
    ['/console/app.css', asset(sources.css, 'text/css; charset=utf-8')],
  ]);
  return { files, gzipBytes: [...files.values()].reduce((sum, f) => sum + f.gzip.length, 0) };
}
