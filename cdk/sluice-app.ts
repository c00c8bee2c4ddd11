/**
 * The two stacks of a Sluice deployment, wired together. `cdk/app.ts` calls this with
 * settings from context; the tests call it directly.
 */
import type { App, RemovalPolicy } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { PowertoolsLogLevel } from './sluice-function.js';
import type { EntryPoint } from './sluice-service.js';
import { SluiceStatefulStack } from './stateful-stack.js';
import { SluiceStatelessStack } from './stateless-stack.js';

export interface SluiceAppOptions {
  /** Prefix of the two stack names. @default 'Sluice' */
  readonly stackPrefix?: string;
  /** See `SluiceServiceProps.namePrefix`. @default - generated names */
  readonly namePrefix?: string;
  /** Table and keys. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /** Log groups. @default RemovalPolicy.DESTROY */
  readonly logRemovalPolicy?: RemovalPolicy;
  /** @default false */
  readonly customerManagedKey?: boolean;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  readonly logLevel?: PowertoolsLogLevel;
  /** @default - alarms without actions */
  readonly alarmTopicArn?: string;
  /** @default 512 */
  readonly memorySize?: number;
  /** See `SluiceServiceProps.checkConcurrency`. @default 10 */
  readonly checkConcurrency?: number;
  /** See `SluiceServiceProps.entryPoint`. @default 'functionUrl' */
  readonly entryPoint?: EntryPoint;
  /** See `SluiceServiceProps.packSegments`. @default true */
  readonly packSegments?: boolean;
}

export function addSluiceStacks(app: App, options: SluiceAppOptions = {}) {
  const { stackPrefix = 'Sluice', customerManagedKey, removalPolicy, ...serviceProps } = options;
  const stateful = new SluiceStatefulStack(app, `${stackPrefix}Stateful`, {
    ...(removalPolicy ? { removalPolicy } : {}),
    ...(customerManagedKey ? { customerManagedKey } : {}),
  });
  const stateless = new SluiceStatelessStack(app, `${stackPrefix}Stateless`, {
    ...serviceProps,
    table: stateful.table,
    secretsKey: stateful.secretsKey,
  });
  return { stateful, stateless };
}
