/**
 * Creation top-ups (docs/exchange-v3.md "Movements on v3"). A user's first funding on v3 sends the
 * fee cap's worth of the asset on top of the amount, at the price when it was signed. For a
 * non-USD asset whose price fell before it settled, the fee in kind takes more than that, and the
 * new subaccount is short of the amount by the difference (`shortfall`). The platform makes it
 * good: the settlement books the whole fee as the platform's (`subaccount_funded`, `feeAmount`)
 * and, in the SAME transaction, stores a signed deposit of the shortfall from the funding
 * subaccount to the user's (`subaccount_transfers` kind `top_up`, `submitted`). The deposit is then
 * sent as every movement is (movements.ts `advanceMovement`: the stored action re-sent after a
 * crash or a transport failure, a refused re-send looked for in the histories), and its settlement
 * records no event: its cost is already in the funding's. A top-up that fails (nothing moved) is
 * still owed: it is signed afresh and sent again, after a backoff.
 *
 * v3 takes amounts to 12 decimals, so the top-up is the shortfall rounded UP to that step; what it
 * sends beyond the shortfall (under 10^-12 of the asset) lands in the user's subaccount as well and
 * is booked with the funding as `feeExcess` (what the platform sent and the exchange did not take),
 * so the journal mirrors the exchange to the base unit.
 */
import { errorMessage } from '@wh/core'
import {
  advanceMovement,
  type CreationFee,
  errorCodeOf,
  exchangeAmount,
  signMovement,
  type TransferDeps,
} from '../movements'
import { deferTransfer, markTopUpDone, resignTopUp, TRANSFER_COLUMNS, type TransferRow } from '../transfers'

/** Top-ups taken per run (a bound on everything). */
export const TOP_UP_BATCH = 100

/** The signed top-up of a creation's shortfall, and what it sends beyond it (the exchange's amount step). */
export async function signTopUp(
  deps: TransferDeps,
  currency: string,
  exchangeId: number,
  fee: CreationFee,
): Promise<{ action: Awaited<ReturnType<typeof signMovement>>; units: bigint; excess: bigint }> {
  const step = deps.exchange.amountStepUnits((await deps.exchange.getCurrency(currency)).erc20_details?.decimals ?? 0)
  const units = ((fee.shortfall + step - 1n) / step) * step
  const amount = await exchangeAmount(deps.exchange, currency, units)
  const action = await signMovement(deps, { method: 'deposit', subaccountId: exchangeId, currency, amount })
  return { action, units, excess: units - fee.shortfall }
}

/**
 * Sends and settles the open top-ups (`submitted`, `accepted`, and `failed` ones, signed again), one after
 * another: they are signed by the funding subaccount, whose nonces must rise. Returns how many settled. The
 * caller holds the exchange cycle lock.
 */
export async function advanceTopUps(deps: TransferDeps): Promise<number> {
  const rows = await deps.sql.unsafe<(TransferRow & { exchange_id: string | null })[]>(
    `select ${TRANSFER_COLUMNS}, (select exchange_id::text from subaccounts s where s.id = subaccount_id) as exchange_id
     from subaccount_transfers
     where kind = 'top_up' and state in ('submitted', 'accepted', 'failed') and next_attempt_at <= now()
     order by created_at, id limit ${TOP_UP_BATCH}`,
  )
  let done = 0
  for (const row of rows) {
    try {
      if (await advanceTopUp(deps, row, Number(row.exchange_id))) done++
    } catch (err) {
      deps.log.warn({ transferId: row.id, err: errorMessage(err) }, 'top-up: error, retried after a backoff')
      await deferTransfer(deps.sql, row, errorCodeOf(err))
    }
  }
  return done
}

async function advanceTopUp(deps: TransferDeps, loaded: TransferRow, exchangeId: number): Promise<boolean> {
  let row: TransferRow | undefined = loaded
  let firstSend = false
  if (row.state === 'failed') {
    const amount = await exchangeAmount(deps.exchange, row.currency, BigInt(row.amount))
    const action = await signMovement(deps, {
      method: 'deposit',
      subaccountId: exchangeId,
      currency: row.currency,
      amount,
    })
    row = await resignTopUp(deps.sql, row.id, action, deps.clock.now())
    if (!row) return false // another run moved it
    firstSend = true
  }
  const id = row.id
  const outcome = await advanceMovement(deps, row, { exchangeSubaccountId: exchangeId, firstSend }, (tx, txId, from) =>
    markTopUpDone(tx, id, { transactionId: txId, from, now: deps.clock.now() }),
  )
  if (outcome.kind === 'settled') return true
  if (outcome.kind === 'pending') {
    await deferTransfer(deps.sql, row)
    return false
  }
  // failed: nothing moved, it is still owed; signed again after a backoff
  await deferTransfer(deps.sql, row, 'TOP_UP_FAILED')
  if (!outcome.retryable)
    await deps.alerter.alert('creation top-up refused; it is signed again after a backoff', {
      transferId: row.id,
      userId: row.user_id,
      currency: row.currency,
      amount: row.amount,
      reason: outcome.reason,
    })
  return false
}
