/** EventBridge Scheduler one-time schedules (far-horizon timer buckets). */
import { ConflictException, CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { ThrottledError } from '../../domain/errors.js';
import { translateTimerError } from './errors.js';
import type { MinuteWake, OneTimeScheduler } from '../../ports/timers.js';

export interface SchedulerTarget {
  groupName: string;
  /** The minute handler Lambda. */
  functionArn: string;
  /** The role Scheduler assumes to invoke it. */
  roleArn: string;
}

/** `at()` wants local date-time without zone or fraction; we pass UTC and say so. */
const atExpression = (ms: number) => `at(${new Date(ms).toISOString().slice(0, 19)})`;

export class EventBridgeScheduler implements OneTimeScheduler {
  constructor(
    private readonly client: SchedulerClient,
    private readonly target: SchedulerTarget,
  ) {}

  async scheduleAt(name: string, at: number, payload: MinuteWake): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.client.send(
          new CreateScheduleCommand({
            Name: name,
            GroupName: this.target.groupName,
            ScheduleExpression: atExpression(at),
            ScheduleExpressionTimezone: 'UTC',
            FlexibleTimeWindow: { Mode: 'OFF' },
            ActionAfterCompletion: 'DELETE',
            Target: { Arn: this.target.functionArn, RoleArn: this.target.roleArn, Input: JSON.stringify(payload) },
          }),
        );
        return;
      } catch (error) {
        // The bucket's schedule exists already: another container armed it first.
        if (error instanceof ConflictException) return;
        const name = error instanceof Error ? error.name : '';
        if (name === 'ThrottlingException' && attempt < 5) {
          await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt * (0.5 + Math.random())));
          continue;
        }
        if (name === 'ThrottlingException') throw new ThrottledError('The scheduler is throttling; retry the request.', 2, { cause: error });
        // 5xx, timeouts, lost connections: retryable (503); access denied, a missing group: a logged, typed 500.
        throw translateTimerError(error, 'EventBridge Scheduler');
      }
    }
  }
}
