/** Push groups on AWS: the push worker may invoke only the functions the construct was told about. */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { SluiceService } from '../../cdk/index.js';
import { grantsOf, logicalIdOf } from './synth.js';

const TARGET = 'arn:aws:lambda:eu-west-1:123456789012:function:orders-consumer';

const synth = (pushTargets: boolean) => {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Push', { env: { account: '123456789012', region: 'eu-west-1' } });
  const service = new SluiceService(stack, 'Queue', pushTargets ? { pushTargets: [LambdaFunction.fromFunctionArn(stack, 'Target', TARGET)] } : {});
  const template = Template.fromStack(stack);
  const worker = service.functions.get('push-worker');
  if (!worker) throw new Error('no push-worker');
  return { template, service, workerId: logicalIdOf(stack, worker) };
};

describe('push worker grants', () => {
  it('lambda:InvokeFunction only on the pushTargets, whose ARNs every function gets as SLUICE_PUSH_LAMBDA_ARNS', () => {
    const { template, workerId } = synth(true);
    const invokes = grantsOf(template, workerId).filter((g) => g.action === 'lambda:InvokeFunction');
    expect(invokes.map((g) => g.resource)).toEqual([TARGET]);
    const env = template.toJSON().Resources[workerId].Properties.Environment.Variables as Record<string, unknown>;
    expect(env.SLUICE_PUSH_LAMBDA_ARNS).toBe(TARGET);
    expect(env.SLUICE_PUSH_QUEUE_URL).toBeDefined();
  });

  it('without pushTargets: no invoke grant at all, and an empty allowed list', () => {
    const { template, workerId } = synth(false);
    expect(grantsOf(template, workerId).filter((g) => g.action.startsWith('lambda:'))).toEqual([]);
    expect(template.toJSON().Resources[workerId].Properties.Environment.Variables.SLUICE_PUSH_LAMBDA_ARNS).toBe('');
  });

  it('consumes the push queue in batches of 10 with partial batch responses', () => {
    const { template, service } = synth(false);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
      EventSourceArn: { 'Fn::GetAtt': [Stack.of(service).getLogicalId(service.pushQueue.queue.node.defaultChild as never), 'Arn'] },
    });
  });
});
