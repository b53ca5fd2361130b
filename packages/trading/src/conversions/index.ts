/**
 * Conversion rounds (docs/trading.md "Conversions and swaps"): the pure figures (figures.ts), the one writer of
 * `conversions` (store.ts) and the rounds' state machine (run.ts, with its steps in plan.ts, swap.ts and
 * movement.ts). The worker's `trading-convert` tick calls runConversions.
 */
export * from './figures'
export {
  CONVERT_BATCH,
  CONVERT_CONCURRENCY,
  type ConvertSummary,
  PLAN_BATCH,
  runConversion,
  runConversions,
} from './run'
export * from './store'
export type { ConvertDeps } from './types'
