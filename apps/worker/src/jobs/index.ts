import type { TickDefinition } from '../ticks'

/**
 * Every tick of the service, one processor per file under jobs/<area>/. The on-chain,
 * exchange and trading issues add theirs (deposits/scan, deposits/sweep, withdrawals/send, …).
 */
export const ticks: readonly TickDefinition[] = []
