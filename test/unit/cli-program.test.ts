/**
 * The `sluice` program's shape, without a server: every command's help (its arguments, options,
 * defaults and choices) and the argument checks that end a run with exit code 2.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOut, listing } from '../../bin/cli/output.js';
import { buildProgram } from '../../bin/cli/program.js';
import { freePort } from '../../local/dynamo.js';
import { runCli } from '../helpers/cli.js';

/** Every command of the program, depth first, with its full name (`topics put`). */
function commandsOf(command: Command, prefix: string[] = []): Array<[string, Command]> {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return [[path.join(' '), sub] as [string, Command], ...commandsOf(sub, path)];
  });
}

/** A loopback port nothing listens on: a run that gets as far as a request exits 3. */
let port: number;
let NOWHERE: string[];
beforeAll(async () => {
  port = await freePort();
  NOWHERE = ['--endpoint', `http://127.0.0.1:${port}`, '--token', 'unused'];
});

describe('sluice program', () => {
  it('has the same commands, arguments, options, defaults and choices', () => {
    const program = buildProgram();
    const all = commandsOf(program);
    expect(all.map(([name]) => name)).toEqual([
      'topics',
      'topics list',
      'topics get',
      'topics put',
      'topics update',
      'topics purge',
      'topics delete',
      'groups',
      'groups list',
      'groups get',
      'groups put',
      'groups update',
      'groups rotate-secret',
      'groups seek',
      'groups delete',
      'groups redrive',
      'producers',
      'producers list',
      'producers put',
      'producers get',
      'producers delete',
      'producers rotate-secret',
      'send',
      'receive',
      'commit',
      'visibility',
      'tail',
      'message',
      'message get',
      'message find',
      'message cancel',
      'tx',
      'tx commit',
      'tx rollback',
      'tx get',
      'console',
    ]);
    const help = [['sluice', program] as [string, Command], ...all].map(([name, command]) => `── ${name}\n${command.helpInformation()}`).join('\n');
    expect(help).toMatchSnapshot();
  });

  it.each([
    [['topics', 'put', 't', '--retention', '299'], '--retention must be an integer from 300 to 1209600.'],
    [['topics', 'put', 't', '--max-delay', '1.5'], '--max-delay must be an integer from 0 to 1209600.'],
    [['groups', 'put', 'g'], "required option '--subscribe <topic[:tags]>' not specified"],
    [['groups', 'put', 'g', '--subscribe', ':paid'], "':paid' is not TOPIC or TOPIC:TAG,TAG."],
    [['groups', 'put', 'g', '--subscribe', 't', '--mode', 'fast'], 'Allowed choices are serialized, protected, concurrent.'],
    [['producers', 'put', 'p', '--checker-url', 'http://x', '--on-max-checks', 'retry'], 'Allowed choices are rollback, commit, keep.'],
    [['send', 't', 'b', '--property', 'color'], "'color' is not NAME=VALUE."],
    [['send', 't', 'b', '--property', '=red'], "'=red' is not NAME=VALUE."],
    [['send', 't', 'b', '--batch-size', '101'], '--batch-size must be an integer from 1 to 100.'],
    [['tail', 'g', '--wait', '0'], '--wait must be an integer from 1 to 20.'],
    [['message', 'find', 't'], "required option '--key <key>' not specified"],
    [['message', 'get', 't'], "missing required argument 'messageId'"],
    [['commit', 'g'], "missing required argument 'receiptHandle'"],
    [['visibility', 'g', 'h'], "required option '--seconds <n>' not specified"],
    [['visibility', 'g', 'h', '--seconds', '43201'], '--seconds must be an integer from 0 to 43200.'],
    [['groups', 'delete'], "missing required argument 'group'"],
    [['producers', 'delete'], "missing required argument 'producerGroup'"],
    [['groups', 'update', 'g', '--mode', 'fast'], 'Allowed choices are serialized, protected, concurrent.'],
    [['topics', 'update', 't', '--retention', '299'], '--retention must be an integer from 300 to 1209600.'],
    [['groups', 'create', 'g'], "required option '--subscribe <topic[:tags]>' not specified"],
    [['groups', 'put', 'g', '--subscribe', 't', '--push-batch-size', '101'], '--push-batch-size must be an integer from 1 to 100.'],
    [['groups', 'put', 'g', '--subscribe', 't', '--push-timeout', '31'], '--push-timeout must be an integer from 1 to 30.'],
    [['groups', 'put', 'g', '--subscribe', 't', '--push-max-concurrency', '0'], '--push-max-concurrency must be an integer from 1 to 100.'],
    [['groups', 'put', 'g', '--subscribe', 't', '--push-url', 'https://x.example/h', '--push-lambda-arn', 'arn'], "option '--push-url <url>' cannot be used with option '--push-lambda-arn <arn>'"],
    [['groups', 'patch', 'g', '--pull', '--push-batch-size', '5'], "option '--pull' cannot be used with option '--push-batch-size <n>'"],
    [['groups', 'rotate-secret'], "missing required argument 'group'"],
    [['--auth', 'basic', 'topics', 'list'], 'Allowed choices are auto, bearer, sigv4, none.'],
    [['topic', 'list'], "unknown command 'topic'"],
  ])('sluice %j exits 2: %s', async (args, message) => {
    const run = await runCli([...NOWHERE, ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe('');
  });

  it('exits 2 on usage mistakes that only the command sees, before any request', async () => {
    const runs = [
      await runCli([...NOWHERE, 'send', 't', 'body', '--file', 'body.txt']),
      await runCli([...NOWHERE, 'send', 't', 'body', '--check-after', '5']),
      await runCli([...NOWHERE, 'send', 't', 'body', '--delay', '5', '--deliver-at', '1700000000000']),
      await runCli([...NOWHERE, 'send', 't', '--file', '/no/such/file']),
      await runCli([...NOWHERE, 'send', 't', 'body', '--ndjson']),
      await runCli([...NOWHERE, 'send', 't', '--ndjson', '--file', '/no/such/file']),
    ];
    expect(runs.map((r) => [r.code, r.stdout, r.stderr])).toEqual([
      [2, '', 'Give the body either as an argument or with --file, not both.\n'],
      [2, '', '--check-after goes with --transaction.\n'],
      [2, '', 'Give either --delay or --deliver-at, not both.\n'],
      [2, '', 'Cannot read /no/such/file: ENOENT.\n'],
      [2, '', '--ndjson reads its lines from --file or standard input, not from an argument.\n'],
      [2, '', 'Cannot read /no/such/file: ENOENT.\n'],
    ]);
  });

  it('exits 2 on a bad configuration, 0 on --version and --help', async () => {
    const badEndpoint = await runCli(['--endpoint', 'not a url', '--token', 't', 'topics', 'list']);
    expect(badEndpoint.code).toBe(2);
    expect(badEndpoint.stderr).not.toBe('');
    expect(await runCli([...NOWHERE, '--timeout', '0', 'topics', 'list'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--timeout must be an integer from 1 to 900.') });
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    const help = await runCli(['topics', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: sluice topics [options] [command]');
  });

  it('exits 3 when the endpoint does not answer', async () => {
    const run = await runCli([...NOWHERE, 'topics', 'list']);
    expect(run).toEqual({
      code: 3,
      stdout: '',
      stderr:
        `Cannot reach Sluice at http://127.0.0.1:${port} (ECONNREFUSED).\n` +
        'Is it running? Start it with `npm start`, or point --endpoint / SLUICE_ENDPOINT at your deployment.\n',
    });
  });
});

describe('sluice --timeout', () => {
  it('gives up on an endpoint that accepts but never answers after its attempts of --timeout seconds, exit 3', async () => {
    const requests: string[] = [];
    const server = createServer((request) => void requests.push(request.url ?? ''));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const run = await runCli(['--endpoint', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--token', 't', '--timeout', '1', 'topics', 'list']);
      expect(run.code).toBe(3);
      expect(run.stderr).toContain('(timed out)');
      // Three attempts of one second each (and the back-off between them), not the default ten seconds.
      expect(requests).toEqual(['/v1/topics', '/v1/topics', '/v1/topics']);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 30_000);
});

describe('sluice output', () => {
  const capture = (json: boolean) => {
    let written = '';
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => (written += chunk.toString()));
    return { out: createOut(json, stream), written: () => written };
  };

  it('prints a value as an indented JSON document with --json, as its text otherwise', () => {
    const value = { name: 'orders', tags: ['a', 'b'] };
    const json = capture(true);
    json.out.print(value, () => 'not printed');
    expect(json.written()).toBe(`${JSON.stringify(value, null, 2)}\n`);

    const text = capture(false);
    text.out.print(value, (v) => `name ${v.name}`);
    text.out.print(value, (v) => v.tags);
    text.out.print(value, () => ['', 'after a blank line']);
    text.out.print(value, () => []);
    expect(text.written()).toBe('name orders\na\nb\n\nafter a blank line\n');
  });

  it('prints a record of a stream as one JSON line with --json, as its text otherwise', () => {
    const json = capture(true);
    json.out.record({ a: 1 }, () => 'not printed');
    json.out.record({ a: 2 }, () => 'not printed');
    expect(json.written()).toBe('{"a":1}\n{"a":2}\n');
    const text = capture(false);
    text.out.record({ a: 1 }, (r) => `a=${r.a}\n`);
    expect(text.written()).toBe('a=1\n\n');
  });

  it('lists items as a table with padded columns, or says there are none', () => {
    const row = (t: { name: string; size: number | null }) => [t.name, t.size];
    expect(listing([], 'No items.', ['NAME', 'SIZE'], row)).toBe('No items.');
    expect(listing([{ name: 'a-long-name', size: 3 }, { name: 'b', size: null }], 'No items.', ['NAME', 'SIZE'], row)).toBe(
      'NAME         SIZE\na-long-name  3\nb            -',
    );
  });
});
