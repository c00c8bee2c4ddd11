/**
 * Opaque message ids and receipt handles (SPEC §3, docs/design.md "Message ids").
 *
 * A direct message id names where its message is — (topic generation, stream
 * local part, sequence number) — and is that address sealed with a
 * deterministic authenticated cipher (SIV construction): the synthetic IV is
 * HMAC-SHA256(macKey, topic ‖ address) cut to 16 bytes, the address is
 * encrypted with AES-256-CTR under that IV, and the id is
 * `m` + base64url(IV ‖ ciphertext).
 *
 * - Opaque: without the deployment's key an id is pseudorandom bytes; it shows
 *   neither the shard key, nor the partition, nor the sequence number.
 * - Unique per deployment: within one topic the address never repeats (a
 *   generation's sequence numbers never repeat in a stream; re-creating a topic
 *   bumps its generation), so the plaintexts differ and so do the ids (the
 *   cipher is a permutation for a given IV). Across topics the topic name is
 *   authenticated data: the IVs of two topics' ids collide with probability
 *   2^-128, the same as for random 128-bit ids.
 * - Still an address: opening an id needs only the key and the topic (which
 *   every request naming a message carries), so a look-up by id stays one read.
 * - Deterministic: the id of (topic, address) is the same in every process, so
 *   ids are computed when records are built and never need a look-up.
 *
 * Receipt handles are sealed the same way (their lease token makes each one
 * unique); their plaintext names topic, stream, sequence number and token. A
 * handle is `r` + base64url(sealed): like an id's `m`, the letter keeps it
 * from starting with `-`, which a command line would take for an option.
 */
import { createCipheriv, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { InvalidArgumentError } from './errors.js';
import type { StreamLocal } from './streams.js';

/** The length of the synthetic IV (and authentication tag) every id and handle starts with. */
export const SIV_BYTES = 16;

/** What a direct message id seals, besides its topic. */
export interface SealedAddress {
  generation: number;
  local: StreamLocal;
  seq: number;
}

/** A receipt handle names one lease: group (from the URL), topic, stream, sequence and lease token. */
export interface Receipt {
  topic: string;
  stream: string;
  seq: number;
  token: string;
}

const ID_VERSION = 1;
const RECEIPT_VERSION = 2;
const ID_DOMAIN = 'sluice/message-id/v1';
const RECEIPT_DOMAIN = 'sluice/receipt/v1';
/**
 * Longest message id text accepted (URL parameter and look-ups): a direct id
 * is at most 557 characters (docs/design.md "Message ids"), a deferred one 27.
 */
export const MESSAGE_ID_MAX_LENGTH = 1024;
/**
 * Longest direct message id (and so the longest any record carries): `m` + base64url of a 16-byte
 * IV and a plaintext of at most 401 bytes (a shard key of 128 UTF-16 units is ≤ 384 UTF-8 bytes,
 * sequence 2^53 − 1, generation 2^31): 1 + ⌈4 × 417 / 3⌉ characters, all ASCII.
 */
export const MESSAGE_ID_LONGEST = 557;
const MAX_ID_LENGTH = MESSAGE_ID_MAX_LENGTH;
const MAX_HANDLE_LENGTH = 2048;

export class MessageIdCodec {
  private readonly encKey: Buffer;
  private readonly macKey: Buffer;

  /** `key`: the deployment's 32-byte message-id key (stored sealed, adapters/dynamodb/message-id-keys.ts). */
  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The message-id key must be 32 bytes.');
    this.encKey = Buffer.from(hkdfSync('sha256', key, 'sluice', 'message-ids/enc', 32));
    this.macKey = Buffer.from(hkdfSync('sha256', key, 'sluice', 'message-ids/mac', 32));
  }

  /** The id of the message at `seq` of `local` in the current generation of `topic`. */
  messageId(topic: { name: string; generation: number }, local: StreamLocal, seq: number): string {
    const plain = new Writer().byte(ID_VERSION).uint(topic.generation);
    if (local.kind === 'partition') plain.byte(0x70).uint(local.partition);
    else plain.byte(0x6b).text(local.shardKey);
    plain.uint(seq);
    return `m${this.seal(idContext(topic.name), plain.done()).toString('base64url')}`;
  }

  /** The address an id of `topicName` seals; undefined for any text this deployment did not issue for that topic. */
  openMessageId(topicName: string, messageId: string): SealedAddress | undefined {
    if (messageId.length > MAX_ID_LENGTH || !/^m[A-Za-z0-9_-]+$/.test(messageId)) return undefined;
    const plain = this.open(idContext(topicName), canonicalBase64url(messageId.slice(1)));
    if (!plain) return undefined;
    const r = new Reader(plain);
    if (r.byte() !== ID_VERSION) return undefined;
    const generation = r.uint();
    const kind = r.byte();
    const local: StreamLocal | undefined =
      kind === 0x70 ? { kind: 'partition', partition: r.uint() } : kind === 0x6b ? { kind: 'shard', shardKey: r.text() } : undefined;
    const seq = r.uint();
    if (!local || !r.ok() || seq < 1 || generation < 1) return undefined;
    return { generation, local, seq };
  }

  /** A receipt handle: the lease's address and token, sealed, after the letter `r`. */
  sealReceipt(receipt: Receipt): string {
    const plain = new Writer().byte(RECEIPT_VERSION).text(receipt.topic).text(receipt.stream).uint(receipt.seq).text(receipt.token).done();
    return `r${this.seal(RECEIPT_DOMAIN, plain).toString('base64url')}`;
  }

  /** The lease a handle names; InvalidArgument (400) for any text this deployment did not issue as a handle. */
  openReceipt(handle: string): Receipt {
    const invalid = () =>
      new InvalidArgumentError('receiptHandle is not a receipt handle issued by Sluice.', {
        issues: [{ path: 'receiptHandle', message: 'malformed receipt handle' }],
      });
    if (handle.length > MAX_HANDLE_LENGTH || !/^[A-Za-z0-9_-]+$/.test(handle)) throw invalid();
    // Handles issued before the `r` (bare base64url) still open while their leases last (≤ 12 h).
    const plain =
      (handle.startsWith('r') ? this.open(RECEIPT_DOMAIN, canonicalBase64url(handle.slice(1))) : undefined) ??
      this.open(RECEIPT_DOMAIN, canonicalBase64url(handle));
    if (!plain) throw invalid();
    const r = new Reader(plain);
    if (r.byte() !== RECEIPT_VERSION) throw invalid();
    const receipt = { topic: r.text(), stream: r.text(), seq: r.uint(), token: r.text() };
    if (!r.ok() || receipt.seq < 1) throw invalid();
    return receipt;
  }

  private siv(context: string, plain: Buffer): Buffer {
    const ctx = Buffer.from(context, 'utf8');
    return createHmac('sha256', this.macKey)
      .update(new Writer().uint(ctx.length).done())
      .update(ctx)
      .update(plain)
      .digest()
      .subarray(0, SIV_BYTES);
  }

  private seal(context: string, plain: Buffer): Buffer {
    const iv = this.siv(context, plain);
    const cipher = createCipheriv('aes-256-ctr', this.encKey, iv);
    return Buffer.concat([iv, cipher.update(plain), cipher.final()]);
  }

  private open(context: string, sealed: Buffer | undefined): Buffer | undefined {
    if (sealed === undefined || sealed.length <= SIV_BYTES) return undefined;
    const iv = sealed.subarray(0, SIV_BYTES);
    const cipher = createCipheriv('aes-256-ctr', this.encKey, iv);
    const plain = Buffer.concat([cipher.update(sealed.subarray(SIV_BYTES)), cipher.final()]);
    return timingSafeEqual(this.siv(context, plain), iv) ? plain : undefined;
  }
}

/**
 * The bytes of base64url text, only when it is the one encoding of them: the
 * decoder ignores a dangling character and the spare bits of the last one, so
 * several texts decode alike, and only the text Sluice issued may name a message.
 */
const canonicalBase64url = (text: string): Buffer | undefined => {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
};

/** The authenticated context of a topic's ids: the topic name binds an id to its topic. */
const idContext = (topicName: string): string => `${ID_DOMAIN}\u0000${topicName}`;

/** Unsigned LEB128 integers (up to 2^53) and length-prefixed UTF-8 texts. */
class Writer {
  private readonly bytes: number[] = [];
  byte(b: number): this {
    this.bytes.push(b);
    return this;
  }
  uint(n: number): this {
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`Not an unsigned safe integer: ${n}`);
    let rest = n;
    while (rest >= 0x80) {
      this.bytes.push((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    this.bytes.push(rest);
    return this;
  }
  text(s: string): this {
    const b = Buffer.from(s, 'utf8');
    this.uint(b.length);
    for (const x of b) this.bytes.push(x);
    return this;
  }
  done(): Buffer {
    return Buffer.from(this.bytes);
  }
}

/** Reads what a Writer wrote; any overrun or leftover byte makes `ok()` false. */
class Reader {
  private at = 0;
  private bad = false;
  constructor(private readonly buf: Buffer) {}
  byte(): number {
    if (this.at >= this.buf.length) {
      this.bad = true;
      return 0;
    }
    return this.buf[this.at++]!;
  }
  uint(): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      n += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        if (!Number.isSafeInteger(n)) this.bad = true;
        return n;
      }
      scale *= 0x80;
    }
    this.bad = true;
    return 0;
  }
  text(): string {
    const length = this.uint();
    if (this.bad || this.at + length > this.buf.length) {
      this.bad = true;
      return '';
    }
    const s = this.buf.subarray(this.at, this.at + length).toString('utf8');
    this.at += length;
    return s;
  }
  ok(): boolean {
    return !this.bad && this.at === this.buf.length;
  }
}
