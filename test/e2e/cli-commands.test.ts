/**
 * Every `sluice` command against the local runtime, in this process (test/helpers/cli.ts): what it
 * prints as text and with --json, on stdout and stderr, and its exit code. test/e2e/cli.test.ts
 * runs the real binary (standard input, NDJSON from a pipe, the exit codes of a process).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, timeless } from '../helpers/cli.js';
import { cliSession } from '../helpers/cli-session.js';

const cli = cliSession();
const { sluice, ok, json } = cli;
const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
const file = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

describe('sluice commands', () => {
  it('say so when there is nothing to list', async () => {
    expect(ok(await sluice('topics', 'list'))).toBe('No topics.\n');
    expect(ok(await sluice('groups', 'list'))).toBe('No consumer groups.\n');
    expect(await json('topics', 'list')).toEqual({ topics: [] });
    expect(await json('groups', 'list')).toEqual({ groups: [] });
  });

  it('topics: put, get, list and delete, as text and JSON', async () => {
    expect(ok(await sluice('topics', 'put', 'cmd-ledger', '--type', 'fifo', '--retention', '3600', '--max-delay', '60'))).toBe(
      'Topic cmd-ledger (fifo) is ready.\n',
    );
    const plain = await json('topics', 'put', 'cmd-plain');
    expect(plain).toMatchObject({ name: 'cmd-plain', type: 'standard', orderGroup: null });
    expect(await json('topics', 'put', 'cmd-grouped', '--type', 'fifo', '--order-group', 'cmd-og')).toMatchObject({ type: 'fifo', orderGroup: 'cmd-og' });

    expect(timeless(ok(await sluice('topics', 'get', 'cmd-ledger')))).toBe(
      [
        'name:                cmd-ledger',
        'type:                fifo',
        'retentionSeconds:    3600',
        'maxDelaySeconds:     60',
        'orderGroup:          -',
        'partitions:          4',
        'sequenced:           false',
        'createdAt:           <time>',
        'approximateMessages: -',
        'subscribers:         []',
        '',
      ].join('\n'),
    );
    expect(await json('topics', 'get', 'cmd-ledger')).toMatchObject({ name: 'cmd-ledger', type: 'fifo', retentionSeconds: 3600, subscribers: [] });

    expect(timeless(ok(await sluice('topics', 'list')))).toBe(
      [
        'NAME         TYPE      PARTITIONS  RETENTION  MAX-DELAY  ORDER-GROUP  CREATED',
        `cmd-grouped  fifo      4           ${plain.retentionSeconds}s    ${plain.maxDelaySeconds}s    cmd-og       <time>`,
        'cmd-ledger   fifo      4           3600s      60s        -            <time>',
        `cmd-plain    standard  4           ${plain.retentionSeconds}s    ${plain.maxDelaySeconds}s    -            <time>`,
        '',
      ].join('\n'),
    );
    expect((await json<{ topics: Array<{ name: string }> }>('topics', 'list')).topics.map((t) => t.name)).toEqual(['cmd-grouped', 'cmd-ledger', 'cmd-plain']);

    expect(ok(await sluice('topics', 'delete', 'cmd-ledger'))).toBe('Deleted topic cmd-ledger.\n');
    expect(await json('topics', 'delete', 'cmd-plain')).toEqual({ deleted: 'cmd-plain' });
    await cli.client.deleteTopic('cmd-grouped');
    expect(ok(await sluice('topics', 'list'))).toBe('No topics.\n');

    expect(await json('topics', 'put', 'cmd-sequenced', '--type', 'fifo', '--sequenced')).toMatchObject({ type: 'fifo', sequenced: true });
    expect(timeless(ok(await sluice('topics', 'get', 'cmd-sequenced')))).toContain('sequenced:           true\n');
    await cli.client.deleteTopic('cmd-sequenced');
  });

  it('groups: put, get and list, as text and JSON', async () => {
    await cli.client.putTopic('cmd-orders', { type: 'standard' });
    await cli.client.putTopic('cmd-audit', { type: 'fifo' });
    expect(
      ok(
        await sluice(
          ...['groups', 'put', 'cmd-billing', '--subscribe', 'cmd-orders:created,paid', '--subscribe', 'cmd-audit'],
          ...['--mode', 'protected', '--visibility', '45', '--max-deliveries', '5', '--dead-letter-topic', 'cmd-dead'],
          ...['--retry-initial', '2', '--retry-multiplier', '1.5', '--retry-max', '90'],
        ),
      ),
    ).toBe('Group cmd-billing (protected) subscribes to cmd-orders, cmd-audit.\n');
    expect(await json('groups', 'put', 'cmd-audit-reader', '--subscribe', 'cmd-audit')).toMatchObject({
      name: 'cmd-audit-reader',
      deliveryMode: 'serialized',
      subscriptions: [{ topic: 'cmd-audit' }],
      deadLetterTopic: 'cmd-audit-reader-dlq',
    });
    const reader = await cli.client.getGroup('cmd-audit-reader');

    expect(timeless(ok(await sluice('groups', 'list')))).toBe(
      [
        'NAME              MODE        VISIBILITY  MAX-DELIVERIES  DEAD-LETTER           SUBSCRIPTIONS',
        `cmd-audit-reader  serialized  ${reader.visibilityTimeoutSeconds}s         ${String(reader.maxDeliveries).padEnd(14)}  cmd-audit-reader-dlq  cmd-audit`,
        'cmd-billing       protected   45s         5               cmd-dead              cmd-orders:created,paid cmd-audit',
        '',
      ].join('\n'),
    );
    expect((await json<{ groups: Array<{ name: string }> }>('groups', 'list')).groups.map((g) => g.name)).toEqual(['cmd-audit-reader', 'cmd-billing']);

    expect(timeless(ok(await sluice('groups', 'get', 'cmd-billing')))).toBe(
      [
        'name:                     cmd-billing',
        'subscriptions:            [{"topic":"cmd-orders","tags":["created","paid"]},{"topic":"cmd-audit"}]',
        'deliveryMode:             protected',
        'visibilityTimeoutSeconds: 45',
        'maxDeliveries:            5',
        'retryPolicy:              {"initialSeconds":2,"multiplier":1.5,"maxSeconds":90}',
        'deadLetterTopic:          cmd-dead',
        'push:                     -',
        'createdAt:                <time>',
        'updatedAt:                <time>',
        'backlog:                  0',
        'inFlight:                 0',
        'pending:                  0',
        'oldestMessageAgeSeconds:  0',
        'deadLettered:             0',
        'committed:                0',
        '',
      ].join('\n'),
    );
    expect(await json('groups', 'get', 'cmd-billing')).toMatchObject({ name: 'cmd-billing', backlog: 0, inFlight: 0 });
  });

  it('producers: put, get and rotate-secret, as text and JSON', async () => {
    const created = ok(
      await sluice('producers', 'put', 'cmd-shop', '--checker-url', 'http://127.0.0.1:9/check', '--check-interval', '30', '--max-checks', '3', '--on-max-checks', 'keep'),
    );
    const producerLines = (extra: string[]) =>
      [
        'name:                 cmd-shop',
        'checkerUrl:           http://127.0.0.1:9/check',
        'checkIntervalSeconds: 30',
        'maxChecks:            3',
        'onMaxChecks:          keep',
        'createdAt:            <time>',
        'updatedAt:            <time>',
        'secretRotatedAt:      <time>',
        ...extra,
        '',
      ].join('\n');
    expect(timeless(created).replace(/whsec_\S+/, 'whsec_…')).toBe(producerLines(['signingSecret:        whsec_…']));
    expect(timeless(ok(await sluice('producers', 'get', 'cmd-shop')))).toBe(producerLines([]));
    const rotated = ok(await sluice('producers', 'rotate-secret', 'cmd-shop'));
    expect(timeless(rotated).replace(/whsec_\S+/, 'whsec_…')).toBe(producerLines(['signingSecret:        whsec_…']));
    expect(rotated.match(/whsec_\S+/)?.[0]).not.toBe(created.match(/whsec_\S+/)?.[0]);

    expect(await json('producers', 'get', 'cmd-shop')).toMatchObject({ name: 'cmd-shop', maxChecks: 3, onMaxChecks: 'keep' });
    expect(await json('producers', 'rotate-secret', 'cmd-shop')).toMatchObject({ name: 'cmd-shop', signingSecret: expect.stringMatching(/^whsec_/) });
    expect(await json('producers', 'put', 'cmd-shop', '--checker-url', 'http://127.0.0.1:9/check2')).toMatchObject({
      checkerUrl: 'http://127.0.0.1:9/check2',
      checkIntervalSeconds: 30,
    });
  });

  it('send: every option, and the text of each kind of result', async () => {
    await cli.client.putTopic('cmd-send', { type: 'standard' });
    await cli.client.putTopic('cmd-send-fifo', { type: 'fifo' });
    await cli.client.putProducer('cmd-send-shop', { checkerUrl: 'http://127.0.0.1:9/check' });

    const plain = await json<{ messageId: string }>(
      ...['send', 'cmd-send', 'hello', '--tag', 'created', '--key', 'k1', '--key', 'k2'],
      ...['--property', 'a=b', '--property', 'c=d=e', '--dedup-id', 'cmd-dedup-1'],
    );
    expect(await cli.client.getMessage('cmd-send', plain.messageId)).toMatchObject({
      body: 'hello',
      encoding: 'utf8',
      tag: 'created',
      keys: ['k1', 'k2'],
      properties: { a: 'b', c: 'd=e' },
    });
    // The same dedup id is the same message.
    expect(ok(await sluice('send', 'cmd-send', 'hello again', '--dedup-id', 'cmd-dedup-1'))).toBe(`${plain.messageId} deliverable\n`);

    const fifo = ok(await sluice('send', 'cmd-send-fifo', 'first', '--shard-key', 'A'));
    // A new shard's first sequence comes from the clock: now_ms × 1000 + 1 (docs/design.md, Idle shards expire).
    expect(fifo).toMatch(/^\S+ deliverable \(sequence \d{13}001\)\n$/);

    const delayed = ok(await sluice('send', 'cmd-send', 'later', '--delay', '600'));
    const [delayedId, delayedAt] = /^(\S+) scheduled \(deliverAt (\S+)\)\n$/.exec(delayed)?.slice(1) ?? [];
    expect(delayedId).toBeDefined();
    expect(Date.parse(delayedAt ?? '') - Date.now()).toBeGreaterThan(590_000);

    const at = Date.now() + 3_600_000;
    expect(ok(await sluice('send', 'cmd-send', 'at epoch ms', '--deliver-at', String(at)))).toMatch(
      new RegExp(`^\\S+ scheduled \\(deliverAt ${new Date(at).toISOString()}\\)\\n$`),
    );
    const iso = new Date(at + 1000).toISOString();
    expect(await json('send', 'cmd-send', 'at RFC 3339', '--deliver-at', iso)).toMatchObject({ state: 'scheduled', deliverAt: iso });

    const half = ok(await sluice('send', 'cmd-send', 'half', '--transaction', 'cmd-send-shop', '--check-after', '30'));
    const [halfId, transactionId] = /^(\S+) prepared \(transaction (t\S+)\)\n$/.exec(half)?.slice(1) ?? [];
    expect(await cli.client.getTransaction(transactionId ?? '')).toMatchObject({ messageId: halfId, state: 'prepared', checkAfterSeconds: 30 });

    const fromFile = await json<{ messageId: string }>('send', 'cmd-send', '--file', file('body.txt', 'from a file\n'));
    expect(await cli.client.getMessage('cmd-send', fromFile.messageId)).toMatchObject({ body: 'from a file\n', encoding: 'utf8' });
    const binary = await json<{ messageId: string }>('send', 'cmd-send', '--file', file('body.bin', new Uint8Array([0, 1, 2, 255])), '--base64');
    expect(await cli.client.getMessage('cmd-send', binary.messageId)).toMatchObject({ body: 'AAEC/w==', encoding: 'base64' });
  });

  it('send --ndjson: the summary as text and JSON, failed lines on stderr, a refused batch by line', async () => {
    await cli.client.putTopic('cmd-bulk', { type: 'standard' });
    const lines = file('lines.ndjson', '{"body":"n1"}\n\n[1]\n{"body":"n2","tag":"created"}\nnot json\n{"body":"n3"}\n');
    const text = await sluice('send', 'cmd-bulk', '--ndjson', '--file', lines, '--batch-size', '2');
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('Sent 3 messages in 2 request(s); 2 failed.\n');
    expect(text.stderr).toMatch(/^line 3: InvalidArgument: each line must be a JSON object with a string "body"\nline 5: InvalidJson: .+\n$/);

    const all = await sluice('--json', 'send', 'cmd-bulk', '--ndjson', '--file', file('good.ndjson', '{"body":"g1"}\n{"body":"g2"}\n'));
    expect(all).toEqual({ code: 0, stderr: '', stdout: `${JSON.stringify({ sent: 2, failed: 0, batches: 1, failures: [] }, null, 2)}\n` });
    expect(ok(await sluice('send', 'cmd-bulk', '--ndjson', '--file', file('empty.ndjson', '')))).toBe('Sent 0 messages in 0 request(s).\n');

    const refused = await sluice('send', 'cmd-bulk', '--ndjson', '--file', file('bad.ndjson', '{"body":"b1"}\n\n{"body":"b2","tag":""}\n'));
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'Stopped at line 1 after 0 messages were sent.\n' +
        'InvalidArgument: Invalid body: entries/1/tag Too small: expected string to have >=1 characters.\n' +
        '  - line 3 tag: Too small: expected string to have >=1 characters\n',
    });
    const missing = await sluice('send', 'cmd-nowhere', '--ndjson', '--file', file('one.ndjson', '{"body":"x"}\n'));
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr: "Stopped at line 1 after 0 messages were sent.\nTopicNotFound: Topic 'cmd-nowhere' does not exist.\n",
    });
  });

  it('receive, commit and tail: the text of delivered messages and commit results', async () => {
    await cli.client.putTopic('cmd-work', { type: 'fifo' });
    await cli.client.putTopic('cmd-other', { type: 'standard' });
    await cli.client.putGroup('cmd-workers', { subscriptions: [{ topic: 'cmd-work' }, { topic: 'cmd-other' }], deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 });
    expect(ok(await sluice('receive', 'cmd-workers'))).toBe('No messages.\n');
    expect(await json('receive', 'cmd-workers')).toEqual({ messages: [] });

    await cli.client.send('cmd-work', { body: 'w1\nsecond line', shardKey: 'A', tag: 'created', keys: ['k1', 'k2'] });
    await cli.client.send('cmd-work', { body: new Uint8Array([1, 2, 3]), shardKey: 'A' });
    await cli.client.send('cmd-other', { body: 'o1' });

    // --topic: only cmd-work's two messages, not cmd-other's.
    const received = ok(await sluice('receive', 'cmd-workers', '--max', '3', '--topic', 'cmd-work', '--visibility', '60'));
    const [first, second] = received.split(/\n(?=\S)/);
    const handles = [...received.matchAll(/^ {2}receipt: (\S+)$/gm)].map((m) => m[1] ?? '');
    const ids = [...received.matchAll(/^(\S+) {2}cmd-work /gm)].map((m) => m[1] ?? '');
    // The shard's numbers start from the clock (docs/design.md, Idle shards expire) and go up by one.
    const firstSeq = Number(/shard=A#(\d+)/.exec(received)?.[1]);
    expect(timeless(first ?? '')).toBe(
      `${ids[0]}  cmd-work shard=A#${firstSeq} tag=created keys=k1,k2  delivery=1  sent=<time>\n  receipt: ${handles[0]}\n  body:    w1 second line`,
    );
    expect(timeless(second ?? '')).toBe(`${ids[1]}  cmd-work shard=A#${firstSeq + 1}  delivery=1  sent=<time>\n  receipt: ${handles[1]}\n  body:    <3 bytes, base64>\n`);

    expect(ok(await sluice('commit', 'cmd-workers', handles[0] ?? '', handles[1] ?? ''))).toBe(`${handles[0]}  committed\n${handles[1]}  committed\n`);
    expect(await json('commit', 'cmd-workers', handles[0] ?? '')).toEqual({ results: [{ receiptHandle: handles[0], status: 'committed' }] });

    // An older lease of a message cannot commit: that entry fails, the run exits 1.
    const [lease] = await cli.client.receive('cmd-workers', { topics: ['cmd-other'], visibilityTimeoutSeconds: 0 });
    // A lease of 0 s has expired at once: a failed attempt, back after the group's 1 s retry back-off.
    const [newer] = await cli.client.receive('cmd-workers', { topics: ['cmd-other'], visibilityTimeoutSeconds: 30, waitSeconds: 3 });
    expect(newer?.messageId).toBe(lease?.messageId);
    const stale = await sluice('commit', 'cmd-workers', lease?.receiptHandle ?? '');
    expect(stale.code).toBe(1);
    expect(stale.stderr).toBe('');
    expect(stale.stdout).toMatch(new RegExp(`^${lease?.receiptHandle}  ReceiptHandleExpired: .+\\n$`));
    const staleJson = await sluice('--json', 'commit', 'cmd-workers', lease?.receiptHandle ?? '');
    expect(staleJson.code).toBe(1);
    expect(JSON.parse(staleJson.stdout)).toMatchObject({ results: [{ receiptHandle: lease?.receiptHandle, error: { code: 'ReceiptHandleExpired' } }] });

    const refused = await sluice('commit', 'cmd-workers', 'not-a-handle');
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'InvalidArgument: entries/0/receiptHandle is not a receipt handle issued by Sluice.\n' + '  - entries/0/receiptHandle: malformed receipt handle\n',
    });
    await cli.client.commit('cmd-workers', [newer?.receiptHandle ?? '']);

    // tail --no-commit prints each message once, with a blank line after it, and leaves them leased.
    await cli.client.send('cmd-work', { body: 't1', shardKey: 'B' });
    await cli.client.send('cmd-work', { body: 't2', shardKey: 'B' });
    const tail = ok(await sluice('tail', 'cmd-workers', '--no-commit', '--limit', '2', '--wait', '1', '--visibility', '30'));
    const tailSeq = Number(/shard=B#(\d+)/.exec(tail)?.[1]);
    expect(timeless(tail)).toMatch(
      new RegExp(
        `^\\S+ {2}cmd-work shard=B#${tailSeq} {2}delivery=1 {2}sent=<time>\\n {2}receipt: \\S+\\n {2}body: {4}t1\\n\\n` +
          `\\S+ {2}cmd-work shard=B#${tailSeq + 1} {2}delivery=1 {2}sent=<time>\\n {2}receipt: \\S+\\n {2}body: {4}t2\\n\\n$`,
      ),
    );
    expect(await cli.client.getGroup('cmd-workers')).toMatchObject({ inFlight: 2 });
  });

  it('tail commits what it prints; with --json one message per line', async () => {
    await cli.client.putTopic('cmd-tail', { type: 'standard' });
    await cli.client.putGroup('cmd-tailer', { subscriptions: [{ topic: 'cmd-tail' }] });
    await cli.client.sendBatch('cmd-tail', [{ body: 'a' }, { body: 'b' }, { body: 'c' }]);
    const tail = ok(await sluice('--json', 'tail', 'cmd-tailer', '--limit', '3', '--max', '2', '--wait', '1'));
    const lines = tail.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.map((line) => (JSON.parse(line) as { body: string }).body).sort()).toEqual(['a', 'b', 'c']);
    // The first batch's commits rode on the second receive, the last batch's were committed at the end.
    expect(await cli.client.getGroup('cmd-tailer')).toMatchObject({ backlog: 0, inFlight: 0, committed: 3 });
  });

  it('message: get, find and cancel, as text and JSON', async () => {
    await cli.client.putTopic('cmd-msgs', { type: 'standard' });
    await cli.client.putGroup('cmd-readers', { subscriptions: [{ topic: 'cmd-msgs' }] });
    const sent = await cli.client.send('cmd-msgs', { body: 'x'.repeat(70), tag: 'created', keys: ['order-1'], properties: { a: 'b' } });
    const message = await cli.client.getMessage('cmd-msgs', sent.messageId);
    expect(timeless(ok(await sluice('message', 'get', 'cmd-msgs', sent.messageId)))).toBe(
      [
        `messageId:     ${sent.messageId}`,
        'topic:         cmd-msgs',
        'state:         deliverable',
        `body:          ${'x'.repeat(70)}`,
        'encoding:      utf8',
        'tag:           created',
        'keys:          ["order-1"]',
        'properties:    {"a":"b"}',
        'shardKey:      -',
        'sequence:      -',
        'sentAt:        <time>',
        'deliverableAt: <time>',
        'expiresAt:     <time>',
        '',
        'GROUP        STATE    DELIVERIES  COMMITTED',
        'cmd-readers  waiting  0           -',
        '',
      ].join('\n'),
    );
    expect(await json('message', 'get', 'cmd-msgs', sent.messageId)).toEqual(message);

    const binary = await cli.client.send('cmd-msgs', { body: new Uint8Array(10), keys: ['order-1'] });
    await cli.client.putTopic('cmd-lonely', { type: 'standard' });
    const lonely = await cli.client.send('cmd-lonely', { body: 'no group reads me' });
    expect(ok(await sluice('message', 'get', 'cmd-lonely', lonely.messageId))).not.toContain('GROUP');

    expect(timeless(ok(await sluice('message', 'find', 'cmd-msgs', '--key', 'order-1')))).toBe(
      [
        `MESSAGE${' '.repeat(Math.max(binary.messageId.length, sent.messageId.length) - 7)}  STATE        SENT${' '.repeat(22)}BODY`,
        `${binary.messageId.padEnd(Math.max(7, sent.messageId.length))}  deliverable  <time>  <10 bytes, base64>`,
        `${sent.messageId.padEnd(Math.max(7, binary.messageId.length))}  deliverable  <time>  ${'x'.repeat(59)}…`,
        '',
      ].join('\n'),
    );
    expect(timeless(ok(await sluice('message', 'find', 'cmd-msgs', '--key', 'order-1', '--limit', '1')))).toMatch(
      new RegExp(`^MESSAGE +STATE +SENT +BODY\\n${binary.messageId} +deliverable +<time>  <10 bytes, base64>\\n\\(more: narrow the key or raise --limit\\)\\n$`),
    );
    expect(ok(await sluice('message', 'find', 'cmd-msgs', '--key', 'order-2'))).toBe("No message of cmd-msgs carries the key 'order-2'.\n");
    expect(await json('message', 'find', 'cmd-msgs', '--key', 'order-1', '--limit', '1')).toMatchObject({
      messages: [{ messageId: binary.messageId }],
      nextToken: expect.any(String),
    });

    const later = await cli.client.send('cmd-msgs', { body: 'later', delaySeconds: 600 });
    const later2 = await cli.client.send('cmd-msgs', { body: 'later 2', delaySeconds: 600 });
    expect(ok(await sluice('message', 'cancel', 'cmd-msgs', later.messageId))).toBe(`Cancelled ${later.messageId}.\n`);
    expect(await json('message', 'cancel', 'cmd-msgs', later2.messageId)).toEqual({ cancelled: later2.messageId });
    const again = await sluice('message', 'cancel', 'cmd-msgs', later.messageId);
    expect(again).toEqual({ code: 1, stdout: '', stderr: `Conflict: Message '${later.messageId}' is cancelled; only scheduled messages can be cancelled.\n` });
  });

  it('tx: get, commit and rollback, as text and JSON', async () => {
    await cli.client.putTopic('cmd-tx', { type: 'fifo' });
    await cli.client.putProducer('cmd-tx-shop', { checkerUrl: 'http://127.0.0.1:9/check' });
    const send = (body: string) => cli.client.send('cmd-tx', { body, shardKey: 'A', transaction: { producerGroup: 'cmd-tx-shop', checkAfterSeconds: 600 } });
    const [a, b, c] = [await send('a'), await send('b'), await send('c')];
    const id = (sent: typeof a) => sent.transactionId ?? '';

    expect(timeless(ok(await sluice('tx', 'get', id(a))))).toBe(
      [
        `transactionId:     ${id(a)}`,
        'state:             prepared',
        'producerGroup:     cmd-tx-shop',
        'topic:             cmd-tx',
        `messageId:         ${a.messageId}`,
        'sequence:          -',
        'sentAt:            <time>',
        'checkAfterSeconds: 600',
        'nextCheckAt:       <time>',
        'checkCount:        0',
        'resolvedBy:        -',
        'resolvedAt:        -',
        '',
      ].join('\n'),
    );
    // The shard opens at this commit: its first number comes from the clock (docs/design.md, Idle shards expire).
    const committedA = ok(await sluice('tx', 'commit', id(a)));
    const seqA = Number(/\(sequence (\d+)\)/.exec(committedA)?.[1]);
    expect(committedA).toBe(`${id(a)} committed: message ${a.messageId} (sequence ${seqA}).\n`);
    expect(await json('tx', 'commit', id(b))).toEqual({ state: 'committed', messageId: b.messageId, sequence: seqA + 1 });
    expect(ok(await sluice('tx', 'rollback', id(c)))).toBe(`${id(c)} rolled-back.\n`);
    expect(await json('tx', 'rollback', id(c))).toEqual({ state: 'rolled-back' });
    expect(await json('tx', 'get', id(a))).toMatchObject({ transactionId: id(a), state: 'committed', resolvedBy: 'producer', checks: [] });
    const late = await sluice('tx', 'commit', id(c));
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/^TransactionAlreadyResolved: /);
  });

  it('exits 1 with a hint when the token is refused', async () => {
    const run = await runCli(['--endpoint', cli.runtime.url, '--token', 'wrong', 'topics', 'list']);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: "Unauthorized: Send Authorization: Bearer <SLUICE_API_TOKEN>.\nPass the server's token with --token or SLUICE_API_TOKEN.\n",
    });
  });
});
