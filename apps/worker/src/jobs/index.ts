import type { TickDefinition } from '../ticks'
import { depositScanTicks } from './deposits/scan'
import { depositSweepProcessor } from './deposits/sweep'
import { depositSweepTick } from './deposits/sweep-tick'

/**
 * Every tick of the service, one processor per file under jobs/<area>/. The on-chain,
 * exchange and trading issues add theirs (deposits/scan, deposits/sweep, withdrawals/send, …).
 */
export const ticks: readonly TickDefinition[] = [
  // one watch per chain (every 5 s), the sweep fan-out (every 10 s) and its per-deposit processor
  ...depositScanTicks,
  depositSweepTick,
  depositSweepProcessor,
]
