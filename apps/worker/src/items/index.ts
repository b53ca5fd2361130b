/**
 * The processors of the jobs the API enqueues for the work it accepts, one per name of @wh/jobs
 * ROW_JOBS (docs/architecture.md "Accepted work: one job per 202"). They have no schedule: the
 * ticks that sweep the same tables stay the backstop for every row a job did not serve.
 */
import type { TickDefinition } from '../ticks'
import { positionProcessors } from './position'
import { releaseRunProcessor } from './release'
import { wheelNextLegProcessor, wheelStopProcessor } from './wheel'
import { withdrawalSendProcessor } from './withdrawal'

export const rowJobProcessors: readonly TickDefinition[] = [
  withdrawalSendProcessor,
  ...positionProcessors,
  releaseRunProcessor,
  wheelNextLegProcessor,
  wheelStopProcessor,
]
