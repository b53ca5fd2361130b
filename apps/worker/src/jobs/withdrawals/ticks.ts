/**
 * The withdrawal tick (queue `withdrawals`; docs/chains.md "Withdrawals"): @wh/withdrawals' round
 * over the due rows on the real outbox (`runWithdrawalSendTick`); here only its name and period.
 */
import { runWithdrawalSendTick, WITHDRAWAL_SEND_EVERY_MS, WITHDRAWAL_SEND_TICK } from '@wh/withdrawals'
import type { TickDefinition } from '../../ticks'

export const withdrawalSendTick: TickDefinition = {
  name: WITHDRAWAL_SEND_TICK,
  queue: 'withdrawals',
  everyMs: WITHDRAWAL_SEND_EVERY_MS,
  process: (_job, ctx) => runWithdrawalSendTick(ctx.deps, ctx.log),
}
