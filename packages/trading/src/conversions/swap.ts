/**
 * A conversion round's first two states (docs/trading.md "Conversions and swaps", "States"):
 * `planned` (every check, then the amount fixed) and `swapping` (the swap ladder, then the deposit
 * of what it bought stored with the move). run.ts runs the state machine; each function here
 * is the one transition of its state, and each move of the round is one transaction.
 */
import { MARGIN_BUFFER_USD, ROUND_GAS_FLOOR_WEI } from '@wh/config'
import { decimalsOf, errorMessage, toBaseUnits } from '@wh/core'
import { balanceOf, userSub } from '@wh/ledger'
import { creditedAmount, executeSwap, type SwapResult } from '@wh/swap'
import { outboxOf } from '@wh/wallet'
import { decider } from '../decider'
import { conversionAmountIn, swapIndexPrice } from './figures'
import { storeMovement } from './movement'
import { indexOf } from './plan'
import { failEmptyRound, failRound, noteRoundReason, startDepositing, startSwapping } from './store'
import type { ConvertDeps, Round, Transition } from './types'

function indexE18(deps: ConvertDeps, round: Round): Promise<bigint> {
  return indexOf(deps, round.instrument)
}

/** planned → swapping: every check first (nothing moves on a refusal), then the amount fixed. */
export async function start(deps: ConvertDeps, round: Round): Promise<Transition> {
  const { sql } = deps
  const wait = async (reason: string): Promise<Transition> => {
    await noteRoundReason(sql, round.id, reason)
    return { done: 'waiting' }
  }
  if (round.exchange_id === null) return wait('the subaccount has no exchange id')
  if (round.stopped_at) return wait('subaccount stopped: conversions wait for the stop to clear')
  try {
    deps.swap.adapter.token(deps.swap.chain, round.sell_currency)
    deps.swap.adapter.token(deps.swap.chain, round.buy_currency)
  } catch (e) {
    return wait(`swap venue: ${errorMessage(e)}`)
  }
  const client = deps.clients.get(deps.swap.chain)
  if (!client) return wait(`no RPC client for ${deps.swap.chain}`)
  const gas = await client.publicClient.getBalance({ address: deps.swap.wallet.address })
  if (gas < ROUND_GAS_FLOOR_WEI)
    return wait(`swap wallet gas ${gas} wei is below the round floor ${ROUND_GAS_FLOOR_WEI} wei`)

  const index = await indexE18(deps, round)
  const held = await balanceOf(sql, userSub(round.user_id, round.exchange_id, round.sell_currency), round.sell_currency)
  const [claimed] = await sql<{ v: string }[]>`
    select coalesce(sum(collateral_amount), 0)::text as v from positions
    where subaccount_id = ${round.subaccount_id} and collateral_currency = ${round.sell_currency}
      and id <> ${round.position_id} and state in ('requested', 'funding', 'placing', 'open', 'closing')`
  const amountIn = conversionAmountIn({
    direction: round.direction,
    trigger: round.trigger,
    held,
    claimedByOthers: BigInt(claimed?.v ?? '0'),
    strikeE18: BigInt(round.strike_e18),
    sizeE18: BigInt(round.filled_e18),
    indexE18: index,
    bufferUsdc: toBaseUnits(MARGIN_BUFFER_USD, 6),
  })
  if (amountIn <= 0n) {
    await failEmptyRound(sql, round.id, deps.clock.now())
    return { done: 'failed' }
  }
  if (!(await startSwapping(sql, round.id, amountIn))) return { done: 'raced' }
  return { next: { ...round, state: 'swapping', amount_in: amountIn.toString() } }
}

/**
 * swapping → depositing: the ladder for this round's swap (same id each time: a restarted worker
 * resumes the same step). Executed → the bought amount's deposit is stored with the move; not
 * executed this run → the reason is kept and the next tick starts a new ladder run; abandoned
 * (older than SWAP_RETRY_STALE_AFTER_MS; the ladder alerted) → failed, and nothing moved.
 */
export async function swap(deps: ConvertDeps, round: Round): Promise<Transition> {
  const amountIn = BigInt(round.amount_in as string)
  let result: SwapResult
  try {
    result = await executeSwap(
      {
        sql: deps.sql,
        outbox: outboxOf(deps),
        adapter: deps.swap.adapter,
        swapWallet: deps.swap.wallet,
        clock: deps.clock,
        alerter: deps.alerter,
        ...(deps.swapReceiptPollMs !== undefined && { receiptPollMs: deps.swapReceiptPollMs }),
      },
      {
        swapId: round.id,
        userId: round.user_id,
        subaccountId: round.exchange_id as string,
        chain: deps.swap.chain,
        sell: round.sell_currency,
        buy: round.buy_currency,
        amountIn,
        indexPrice: swapIndexPrice(round.direction, await indexE18(deps, round)),
        creditStep: creditStepOf(deps, round.buy_currency),
      },
    )
  } catch (e) {
    await noteRoundReason(deps.sql, round.id, `swap not started: ${errorMessage(e)}`)
    return { done: 'swapping' }
  }
  if (result.outcome === 'executed') {
    // what the user is credited, in the exchange's finest step (the swap booked the same; the rest,
    // under one step, stays in the swap wallet as the platform's)
    const bought = creditedAmount(result.buyAmount as bigint, creditStepOf(deps, round.buy_currency))
    const row = await storeMovement(
      deps,
      round,
      { kind: 'convert_in', method: 'deposit', currency: round.buy_currency, units: bought },
      (tx, transferId) => startDepositing(tx, round, transferId, bought),
    )
    if (!row) return { done: 'raced' }
    return {
      next: { ...round, state: 'depositing', amount_out: bought.toString(), in_transfer_id: row.id },
      firstSend: true,
    }
  }
  if (result.outcome === 'abandoned') {
    await fail(deps, round, 'the swap was abandoned (SWAP_RETRY_STALE_AFTER_MS): nothing moved')
    return { done: 'failed' }
  }
  await noteRoundReason(
    deps.sql,
    round.id,
    `swap ${result.outcome}${result.error ? `: ${errorMessage(result.error)}` : ''}; retried next tick`,
  )
  return { done: `swap_${result.outcome}` }
}

/** swapping → failed, with the decision and an alert (once: only the update that moved it). */
async function fail(deps: ConvertDeps, round: Round, reason: string): Promise<void> {
  const moved = await failRound(deps.sql, round.id, 'swapping', reason, deps.clock.now())
  if (moved)
    await decider(
      deps,
      { wheelId: round.wheel_id, userId: round.user_id, positionId: round.position_id },
      deps.clock.now(),
    )('conversion', 'conversion_failed', { detail: reason })
  if (moved)
    await deps.alerter.alert('conversion round failed', {
      conversionId: round.id,
      userId: round.user_id,
      direction: round.direction,
      reason,
    })
}

/** The exchange's finest amount of `currency` in its base units: what a round's deposit can carry. */
function creditStepOf(deps: ConvertDeps, currency: string): bigint {
  const decimals = decimalsOf(currency)
  if (decimals === undefined) throw new Error(`no decimals known for ${currency}`)
  return deps.exchange.amountStepUnits(decimals)
}
