/**
 * WORKER_CLOCK=exchange (the local run, scripts/demo.sh): each job first reads the exchange's time
 * again, so a tick that runs right after the simulator's clock was moved sees the new time (the
 * maker window over, the expiry passed) and the Derive client signs with a timestamp the exchange
 * accepts. With the system clock the ticks are returned as they are.
 */
import { type Clock, FollowedClock } from '@wh/core'
import type { TickDefinition } from './ticks'

export function clockSyncedTicks(ticks: readonly TickDefinition[], clock: Clock): readonly TickDefinition[] {
  if (!(clock instanceof FollowedClock)) return ticks
  return ticks.map((tick) => ({
    ...tick,
    process: async (job, ctx) => {
      await clock.sync()
      return tick.process(job, ctx)
    },
  }))
}
