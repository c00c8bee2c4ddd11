/**
 * CDK entry (`cdk.json`: `npx tsx cdk/app.ts`). Environment-agnostic and offline:
 * settings come from context (`-c sluice:namePrefix=prod`), never from look-ups.
 */
import { App, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { addSluiceStacks } from './sluice-app.js';
import type { PowertoolsLogLevel } from './sluice-function.js';

const app = new App();
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));

const context = (key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(`sluice:${key}`);
  return value === undefined || value === null || value === '' ? undefined : String(value);
};
const retentionDays = context('logRetentionDays');
const memorySize = context('memorySize');
const logLevel = context('logLevel');
const namePrefix = context('namePrefix');
const alarmTopicArn = context('alarmTopicArn');
const checkConcurrency = context('checkConcurrency');
const entryPoint = context('entryPoint');
const packSegments = context('packSegments');

if (retentionDays !== undefined && !Object.values(RetentionDays).includes(Number(retentionDays))) {
  throw new Error(`sluice:logRetentionDays=${retentionDays} is not a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, …)`);
}
if (checkConcurrency !== undefined && !/^\d+$/.test(checkConcurrency)) {
  throw new Error(`sluice:checkConcurrency=${checkConcurrency} must be a whole number from 2 to 1000`);
}
if (entryPoint !== undefined && entryPoint !== 'functionUrl' && entryPoint !== 'httpApi') {
  throw new Error(`sluice:entryPoint=${entryPoint} must be functionUrl or httpApi`);
}
if (packSegments !== undefined && packSegments !== 'true' && packSegments !== 'false') {
  throw new Error(`sluice:packSegments=${packSegments} must be true or false`);
}
if (logLevel !== undefined && !['DEBUG', 'INFO', 'WARN', 'ERROR'].includes(logLevel)) {
  throw new Error(`sluice:logLevel=${logLevel} must be DEBUG, INFO, WARN or ERROR`);
}

addSluiceStacks(app, {
  stackPrefix: context('stackPrefix') ?? 'Sluice',
  ...(namePrefix ? { namePrefix } : {}),
  // `-c sluice:removalPolicy=destroy` for throw-away environments; data is retained otherwise.
  removalPolicy: context('removalPolicy') === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
  logRemovalPolicy: context('logRemovalPolicy') === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
  customerManagedKey: context('customerManagedKey') === 'true',
  ...(retentionDays ? { logRetention: Number(retentionDays) as RetentionDays } : {}),
  ...(memorySize ? { memorySize: Number(memorySize) } : {}),
  ...(logLevel ? { logLevel: logLevel as PowertoolsLogLevel } : {}),
  ...(alarmTopicArn ? { alarmTopicArn } : {}),
  ...(checkConcurrency ? { checkConcurrency: Number(checkConcurrency) } : {}),
  // `-c sluice:entryPoint=httpApi` for an API Gateway HTTP API (custom domains, throttling) instead of the function URL.
  ...(entryPoint ? { entryPoint: entryPoint as 'functionUrl' | 'httpApi' } : {}),
  // `-c sluice:packSegments=false` for the first deploy of an upgrade from a release that cannot read
  // packed segments, or before a rollback to one (README, "Upgrading").
  ...(packSegments ? { packSegments: packSegments === 'true' } : {}),
});
