/** Sluice's infrastructure as a library: the L3 construct and its parts. */
export { SluiceService, API_FUNCTION, RECEIVE_FUNCTION, type EntryPoint, type SluiceServiceProps, type SluiceFunctionOptions } from './sluice-service.js';
export {
  SluiceFunction,
  TableAccess,
  TABLE_READ_ACTIONS,
  TABLE_WRITE_ACTIONS,
  type SluiceFunctionProps,
  type PowertoolsLogLevel,
} from './sluice-function.js';
export { SluiceTable, sluiceIndexNames, type SluiceTableProps } from './sluice-table.js';
export { SluiceStatefulStack, type SluiceStatefulStackProps } from './stateful-stack.js';
export { SluiceStatelessStack, type SluiceStatelessStackProps } from './stateless-stack.js';
export { addSluiceStacks, type SluiceAppOptions } from './sluice-app.js';
export { WorkQueue, InvokeEveryTick, schedulerRole, allowInvoke, type WorkQueueProps } from './background.js';
