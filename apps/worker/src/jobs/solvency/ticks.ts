/**
 * The solvency tick (queue `solvency`, every SOLVENCY_EVERY_SECONDS; docs/solvency.md "Continuous
 * solvency"): @wh/solvency's run, then the CCTP transfers late past Circle's documented time told to
 * ops (docs/chains.md "The L2 route"), wired here so @wh/solvency needs no CCTP code.
 */
import { runSolvencyTick, SOLVENCY_TICK } from '@wh/solvency'
import { alertLateCctp } from '@wh/treasury'
import type { TickDefinition } from '../../ticks'

export const solvencyTick: TickDefinition = {
  name: SOLVENCY_TICK,
  queue: 'solvency',
  everyMsOf: (config) => config.solvency.everyMs,
  process: (_job, ctx) => runSolvencyTick(ctx.deps, ctx.log, () => alertLateCctp(ctx.deps)),
}
