/** `sluice groups list|get|put (create)|update (patch)|rotate-secret|delete|seek`: consumer groups, pull and push. */
import { Option, type Command } from 'commander';
import type { DeliveryMode, Group, PushInput, RetryPolicy, Subscription } from '../../../lib/client/types.js';
import { gather, withContext } from '../context.js';
import { fields, listing } from '../output.js';
import { decimal, integer, subscription } from '../parsers.js';

const COLUMNS = ['NAME', 'MODE', 'VISIBILITY', 'MAX-DELIVERIES', 'DEAD-LETTER', 'SUBSCRIPTIONS'];
/** Subscriptions as `--subscribe` takes them: `topic` or `topic:tag,tag`. */
const subscriptions = (g: Group) => g.subscriptions.map((s) => (s.tags ? `${s.topic}:${s.tags.join(',')}` : s.topic)).join(' ');
const row = (g: Group) => [g.name, g.deliveryMode, `${g.visibilityTimeoutSeconds}s`, g.maxDeliveries, g.deadLetterTopic, subscriptions(g)];

/** `--retry-initial/--retry-multiplier/--retry-max`: the retry policy's fields given (the server checks maxSeconds ≥ initialSeconds). */
interface RetryOptions {
  retryInitial?: number;
  retryMultiplier?: number;
  retryMax?: number;
}
const retryPolicyOf = (o: RetryOptions): { retryPolicy?: Partial<RetryPolicy> } => {
  const policy: Partial<RetryPolicy> = {
    ...(o.retryInitial !== undefined ? { initialSeconds: o.retryInitial } : {}),
    ...(o.retryMultiplier !== undefined ? { multiplier: o.retryMultiplier } : {}),
    ...(o.retryMax !== undefined ? { maxSeconds: o.retryMax } : {}),
  };
  return Object.keys(policy).length > 0 ? { retryPolicy: policy } : {};
};
const retryOptions = (command: Command, defaults: boolean) =>
  command
    .option('--retry-initial <seconds>', `retry back-off after the first failed attempt, 0: at once${defaults ? ' (default 1)' : ''}`, integer('--retry-initial', 0, 3600))
    .option('--retry-multiplier <factor>', `retry back-off factor per further failed attempt${defaults ? ' (default 2)' : ''}`, decimal('--retry-multiplier', 1, 10))
    .option('--retry-max <seconds>', `longest retry back-off${defaults ? ' (default 600)' : ''}`, integer('--retry-max', 0, 43_200));

/** `--push-*`: a push group's target and batching (SPEC §3.9); ranges as the server checks them (lib/domain/push.ts). */
interface PushOptions {
  pushUrl?: string;
  pushLambdaArn?: string;
  pushBatchSize?: number;
  pushTimeout?: number;
  pushMaxConcurrency?: number;
}
const pushOf = (o: PushOptions): { push?: PushInput } => {
  const push: PushInput = {
    ...(o.pushUrl !== undefined ? { url: o.pushUrl } : {}),
    ...(o.pushLambdaArn !== undefined ? { lambdaArn: o.pushLambdaArn } : {}),
    ...(o.pushBatchSize !== undefined ? { batchSize: o.pushBatchSize } : {}),
    ...(o.pushTimeout !== undefined ? { timeoutSeconds: o.pushTimeout } : {}),
    ...(o.pushMaxConcurrency !== undefined ? { maxConcurrency: o.pushMaxConcurrency } : {}),
  };
  return Object.keys(push).length > 0 ? { push } : {};
};
const pushOptions = (command: Command, defaults: boolean) =>
  command
    .addOption(new Option('--push-url <url>', 'make it a push group: Sluice POSTs its messages to this https URL (http on loopback locally)').conflicts('pushLambdaArn'))
    .option('--push-lambda-arn <arn>', 'make it a push group delivering to this Lambda function (AWS; one the deployment allows)')
    .option('--push-batch-size <n>', `messages per push request${defaults ? ' (default 1)' : ''}`, integer('--push-batch-size', 1, 100))
    .option('--push-timeout <seconds>', `how long a push request may take before it is retried${defaults ? ' (default 10)' : ''}`, integer('--push-timeout', 1, 30))
    .option('--push-max-concurrency <n>', `push requests in flight for the group${defaults ? ' (default 10)' : ''}`, integer('--push-max-concurrency', 1, 100));

/** The text of a saved group; a signing secret, answered only on the first push settings and on rotation, is printed with it. */
const savedText = (g: Group, summary: string | string[]) => [
  ...(typeof summary === 'string' ? [summary] : summary),
  ...(g.push ? [`Pushes to ${g.push.url ?? g.push.lambdaArn} (batch ${g.push.batchSize}, timeout ${g.push.timeoutSeconds}s, concurrency ${g.push.maxConcurrency}).`] : []),
  ...(g.signingSecret ? [`Signing secret (shown only now; give it to createPushHandler): ${g.signingSecret}`] : []),
];

/** The settings `put` and `update` both take (all but --subscribe, which `put` requires). */
interface SettingOptions extends RetryOptions {
  mode?: DeliveryMode;
  visibility?: number;
  maxDeliveries?: number;
  deadLetterTopic?: string;
}

/** Adds the setting options to `put` or `update`, after its --subscribe (help lists them in this order). */
const settingOptions = (command: Command, deadLetterHelp: string, defaults: boolean): Command =>
  retryOptions(command
    .addOption(new Option('--mode <mode>', 'delivery mode for FIFO topics').choices(['serialized', 'protected', 'concurrent']))
    .option('--visibility <seconds>', 'visibility timeout', integer('--visibility', 1, 43_200))
    .option('--max-deliveries <n>', 'deliveries before dead-lettering', integer('--max-deliveries', 1, 1000))
    .option('--dead-letter-topic <topic>', deadLetterHelp), defaults);

/** The settings given on the command line, by their API names; the ones not given are left out. */
const settingsOf = (options: SettingOptions) => ({
  ...(options.mode ? { deliveryMode: options.mode } : {}),
  ...(options.visibility !== undefined ? { visibilityTimeoutSeconds: options.visibility } : {}),
  ...(options.maxDeliveries !== undefined ? { maxDeliveries: options.maxDeliveries } : {}),
  ...retryPolicyOf(options),
  ...(options.deadLetterTopic ? { deadLetterTopic: options.deadLetterTopic } : {}),
});

export function addGroupCommands(program: Command): void {
  const groups = program.command('groups').description('manage consumer groups');
  groups
    .command('list')
    .description('list consumer groups')
    .action(withContext(async ({ client, out }) => {
      const all = await gather(client.iterateGroups());
      out.print({ groups: all }, () => listing(all, 'No consumer groups.', COLUMNS, row));
    }));
  groups
    .command('get <group>')
    .description('show a group with backlog, in-flight and dead-letter statistics')
    .action(withContext(async ({ client, out }, name: string) => out.print(await client.getGroup(name), fields)));
  const put = groups
    .command('put <group>')
    .alias('create')
    .description('create or replace a consumer group (settings not given take their defaults)')
    .requiredOption('--subscribe <topic[:tags]>', 'subscribe to a topic, optionally only to some tags (repeatable)', subscription);
  pushOptions(settingOptions(put, 'dead-letter topic (default <group>-dlq)', true), true).action(
    withContext(async ({ client, out }, name: string, options: SettingOptions & PushOptions & { subscribe: Subscription[] }) => {
      const group = await client.putGroup(name, { subscriptions: options.subscribe, ...settingsOf(options), ...pushOf(options) });
      out.print(group, (g) => savedText(g, `Group ${g.name} (${g.deliveryMode}) subscribes to ${g.subscriptions.map((s) => s.topic).join(', ')}.`));
    }),
  );
  const update = groups
    .command('update <group>')
    .alias('patch')
    .description('change only the settings given (PATCH); --subscribe, when given, replaces the whole list')
    .option('--subscribe <topic[:tags]>', 'subscribe to a topic, optionally only to some tags (repeatable)', subscription);
  pushOptions(settingOptions(update, 'dead-letter topic', false), false)
    .addOption(new Option('--pull', 'make a push group a pull group again (push: null); its signing secret is kept').conflicts(['pushUrl', 'pushLambdaArn', 'pushBatchSize', 'pushTimeout', 'pushMaxConcurrency']))
    .action(
      withContext(async ({ client, out }, name: string, options: SettingOptions & PushOptions & { subscribe?: Subscription[]; pull?: boolean }) => {
        const group = await client.patchGroup(name, {
          ...(options.subscribe ? { subscriptions: options.subscribe } : {}),
          ...settingsOf(options),
          ...(options.pull ? { push: null } : pushOf(options)),
        });
        // fields() prints signingSecret too, when this save gave the group its first push settings.
        out.print(group, fields);
      }),
  );
  groups
    .command('rotate-secret <group>')
    .description("issue a new signing secret for a push group; the previous one keeps signing beside it for 24 h")
    .action(withContext(async ({ client, out }, name: string) => {
      const group = await client.rotateGroupSecret(name);
      out.print(group, (g) => [`New signing secret for push group ${g.name} (shown only now; the previous one also signs until 24 h from now):`, g.signingSecret ?? '']);
    }));
  groups
    .command('seek <group>')
    .description('move a group on its topics: earliest, latest (skip the backlog) or an RFC 3339 time; leases in flight end')
    .requiredOption('--to <earliest|latest|time>', 'where to move: earliest, latest, or an RFC 3339 time up to now')
    .option('--topic <topic>', 'only this topic (repeatable; default: every subscribed topic)', (value: string, all: string[] = []) => [...all, value])
    .action(withContext(async ({ client, out }, name: string, options: { to: string; topic?: string[] }) => {
      const result = await client.seek(name, { to: options.to, ...(options.topic ? { topics: options.topic } : {}) });
      out.print(result, (r) =>
        [
          `Group ${r.group} moved to ${options.to}:`,
          ...r.positions.map((p) => `  ${p.topic} partition ${p.partition}: next ${p.next}`),
          ...(r.shards ?? []).map((s) => `  ${s.topics.join(', ')}: ${s.moved} shard${s.moved === 1 ? '' : 's'} moved`),
        ].join('\n'),
      );
    }));
  groups
    .command('delete <group>')
    .description('delete a consumer group: its position and leases end; its dead-letter topic stays')
    .action(withContext(async ({ client, out }, name: string) => {
      await client.deleteGroup(name);
      out.print({ deleted: name }, () => `Deleted group ${name}.`);
    }));
}
