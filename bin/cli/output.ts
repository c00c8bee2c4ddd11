/** How the CLI prints: JSON documents with --json, aligned tables and key/value lines otherwise. */
import { decodeBody } from '../../lib/client/client.js';
import type { Delivered } from '../../lib/client/types.js';

export interface Out {
  /** True with --json. */
  json: boolean;
  /** One line of text (an empty line without `text`). */
  line(text?: string): void;
  /** A JSON document, indented. */
  data(value: unknown): void;
  /**
   * The print step of a command: `value` as a JSON document with --json, otherwise the text
   * `text` makes of it (an array prints one line per element; an empty one prints nothing).
   */
  print<T>(value: T, text: (value: T) => string | string[]): void;
  /** One record of a stream (`tail`): a JSON line with --json, otherwise the text `text` makes of it. */
  record<T>(value: T, text: (value: T) => string): void;
}

export function createOut(json: boolean, stream: NodeJS.WritableStream = process.stdout): Out {
  const line = (text = '') => void stream.write(`${text}\n`);
  const data = (value: unknown) => void stream.write(`${JSON.stringify(value, null, 2)}\n`);
  return {
    json,
    line,
    data,
    print: (value, text) => {
      if (json) return data(value);
      const lines = text(value);
      for (const one of typeof lines === 'string' ? [lines] : lines) line(one);
    },
    record: (value, text) => line(json ? JSON.stringify(value) : text(value)),
  };
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: string[], rows: Array<Array<string | number | null | undefined>>): string {
  const cells = [headers, ...rows.map((row) => row.map((c) => (c === null || c === undefined || c === '' ? '-' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd())
    .join('\n');
}

/** A table with a row per item, or the sentence `empty` when there is none. */
export function listing<T>(items: T[], empty: string, headers: string[], row: (item: T) => Array<string | number | null | undefined>): string {
  return items.length === 0 ? empty : table(headers, items.map(row));
}

/** `key: value` lines, nested objects as JSON. */
export function fields(record: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  return Object.entries(record)
    .map(([key, value]) => `${`${key}:`.padEnd(width + 1)} ${value === null || value === undefined ? '-' : typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join('\n');
}

/** A body for a terminal: text as is (one line, shortened), binary as its size. */
export function bodyPreview(message: { body: string; encoding: 'utf8' | 'base64' }, max = 200): string {
  if (message.encoding === 'base64') return `<${decodeBody(message).length} bytes, base64>`;
  const flat = message.body.replace(/\s*\n\s*/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** One delivered message, as `receive` and `tail` print it. */
export function deliveredLines(m: Delivered): string {
  const where = m.shardKey !== null ? ` shard=${m.shardKey}#${m.sequence}` : '';
  const tag = m.tag ? ` tag=${m.tag}` : '';
  const keys = m.keys.length ? ` keys=${m.keys.join(',')}` : '';
  return [
    `${m.messageId}  ${m.topic}${where}${tag}${keys}  delivery=${m.deliveryCount}  sent=${m.sentAt}`,
    `  receipt: ${m.receiptHandle}`,
    `  body:    ${bodyPreview(m)}`,
  ].join('\n');
}
