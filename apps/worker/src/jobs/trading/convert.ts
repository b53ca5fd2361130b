/**
 * Conversion rounds (queue `conversions`, every CONVERSION_FAST_TICK_SECONDS, under the exchange cycle
 * lock; docs/trading.md "Conversions"). A wheel leg that ends in the money flips what the wheel
 * holds: after a put the subaccount buys the underlying, after a call it sells it. A round:
 *
 *   planned ─▶ swapping ─▶ depositing ─▶ withdrawing ─▶ done
 *      └──────────┴─▶ failed (nothing moved: nothing to convert, or the swap abandoned)
 *
 * 1. swapping: the swap wallet sells the round's amount at the venue through the swap ladder
 *    (@wh/swap, swap id = the round's id): `swap_executed` moves the subaccount's journal balance
 *    from the sold currency to the bought one at the venue's real price, gas as `gas_spent`;
 * 2. depositing: the bought amount goes from the platform's exchange wallet into the subaccount
 *    (a signed deposit stored before it is sent, subaccount_transfers kind `convert_in`);
 * 3. withdrawing: then the sold amount leaves the subaccount for the exchange wallet (kind
 *    `convert_out`); on settlement the round is done and the wheel holds the other side (with its
 *    cost basis after a put). Deposit first, withdraw second: the subaccount's margin never drops
 *    during a round (a short leg in the money needs it), the platform fronts the bought side.
 *
 * The exchange wallet and the swap wallet are the platform's two inventories: each round moves the
 * user's money between the subaccount and the exchange wallet, and the venue trade rebalances the
 * platform by the same amounts (docs/trading.md "Inventory"). Every step is a conditional update
 * of the round, every movement a stored signed action, and the swap keyed by the round: a crash at
 * any point resumes the same step and nothing is sent twice.
 */
import { MARGIN_BUFFER_USD, ROUND_GAS_FLOOR_WEI } from '@wh/config'
import { type Clock, decimalsOf, errorMessage, mapLimit, toBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import { retryDelayMs } from '@wh/jobs'
import { balanceOf, userSub } from '@wh/ledger'
import { markConversionTransferDone } from '@wh/subaccounts'
import { executeSwap, type SwapAdapter, type SwapResult } from '@wh/swap'
import {
  type ConversionDirection,
  type ConversionTrigger,
  conversionAmountIn,
  costBasisAfter,
  e18Decimal,
  swapIndexPrice,
} from '@wh/trading'
import type { ChainClients, ChainInfo, ChainName } from '@wh/wallet'
import type { LocalAccount } from 'viem'
import { outboxOf } from '../../outbox-deps'
import type { TickDefinition, WorkerDeps } from '../../ticks'
import { withCycleLock } from '../exchange/cycle-lock'
import {
  advanceMovement,
  errorCodeOf,
  exchangeAmount,
  insertSignedMovement,
  signMovement,
  TRANSFER_COLUMNS,
  type TransferDeps,
  type TransferRow,
} from '../exchange/transfers'
import { alertStuck, indexOf, planRounds } from './convert-plan'
import { amountOf, decider } from './decide'

export const CONVERT_TICK = 'trading-convert'
/** rounds advanced per run (a bound on everything) */
export const CONVERT_BATCH = 100
export { PLAN_BATCH } from './convert-plan'
/** rounds advanced at once */
export const CONVERT_CONCURRENCY = 8

export interface ConvertDeps extends TransferDeps {
  readonly redis: import('ioredis').Redis
  readonly clock: Clock
  readonly swap: { readonly adapter: SwapAdapter; readonly wallet: LocalAccount; readonly chain: ChainName }
  readonly clients: ReadonlyMap<ChainName, ChainClients>
  readonly registry: ReadonlyMap<ChainName, ChainInfo>
  /** signs replacements of the swap wallet's stuck transactions (outbox-deps.ts) */
  readonly signerOf?: WorkerDeps['signerOf']
  /** PRE_CONVERT_LEAD_MINUTES, CONVERSION_STUCK_MINUTES */
  readonly preConvertLeadMinutes: number
  readonly stuckMinutes: number
  /** tests: poll receipts faster */
  readonly swapReceiptPollMs?: number
  /** set by runConversions: the index per instrument, read once per run */
  readonly indexCache?: Map<string, Promise<bigint>>
  /** tests: runs once a movement is stored and before it is first sent (the crash window) */
  readonly hooks?: { afterStored?: (row: TransferRow) => Promise<void> }
}

export type RoundState = 'planned' | 'withdrawing' | 'swapping' | 'depositing' | 'done' | 'failed'

interface Round {
  id: string
  wheel_id: string
  position_id: string
  user_id: string
  subaccount_id: string
  exchange_id: string | null
  stopped_at: Date | null
  asset: string
  direction: ConversionDirection
  trigger: ConversionTrigger
  state: RoundState
  sell_currency: string
  buy_currency: string
  amount_in: string | null
  amount_out: string | null
  out_transfer_id: string | null
  in_transfer_id: string | null
  alerted_at: Date | null
  created_at: Date
  instrument: string
  strike_e18: string
  filled_e18: string
  settlement_cost: string | null
  attempts: number
}

export interface ConvertSummary {
  locked: boolean
  planned: number
  steps: Record<string, number>
}

export async function runConversions(given: ConvertDeps): Promise<ConvertSummary> {
  // one index read per instrument and run (a run takes seconds; the ladder's sanity guard and the
  // in-the-money check are not finer than that), not one per round and step
  const deps: ConvertDeps = { ...given, indexCache: new Map() }
  const r = await withCycleLock(deps.redis, async () => {
    const planned = await planRounds(deps)
    const steps: Record<string, number> = {}
    // rounds side by side (the swap wallet's nonce lock serialises only the signing): on a chain
    // with real block times a round waits seconds for its swap, and one at a time would hold the
    // cycle lock for minutes with a hundred rounds open
    await mapLimit(await openRounds(deps.sql), CONVERT_CONCURRENCY, async (round) => {
      let step: string
      try {
        step = await advance(deps, round)
        // not done: behind the rounds not served yet (docs/hostile-world.md "Fair queues")
        if (step !== 'done' && step !== 'failed') await deferRound(deps.sql, round)
      } catch (e) {
        step = 'error'
        await setReason(deps.sql, round.id, `step failed: ${errorMessage(e)}`)
        await deferRound(deps.sql, round, e)
      }
      steps[step] = (steps[step] ?? 0) + 1
    })
    await alertStuck(deps)
    return { planned, steps }
  })
  return r.ran ? { locked: false, ...r.value } : { locked: true, planned: 0, steps: {} }
}

async function openRounds(sql: Sql): Promise<Round[]> {
  return sql<Round[]>`
    select c.id, c.wheel_id, c.position_id, c.user_id, c.subaccount_id, s.exchange_id::text, s.stopped_at, c.asset,
      c.direction, c.trigger, c.state, c.sell_currency, c.buy_currency, c.amount_in::text, c.amount_out::text,
      c.out_transfer_id, c.in_transfer_id, c.alerted_at, c.created_at, p.instrument, p.strike_e18::text,
      p.filled_e18::text, p.settlement_cost::text, c.attempts
    from conversions c
    join subaccounts s on s.id = c.subaccount_id
    join positions p on p.id = c.position_id
    where c.state in ('planned', 'withdrawing', 'swapping', 'depositing') and c.next_attempt_at <= now()
    order by c.next_attempt_at, c.created_at
    limit ${CONVERT_BATCH}`
}

/** Rotates an open round behind the others, or (after a failure) backs it off. */
async function deferRound(sql: Sql, round: Round, failure?: unknown): Promise<void> {
  if (failure === undefined) {
    await sql`update conversions set next_attempt_at = now() where id = ${round.id}`
    return
  }
  const attempts = round.attempts + 1
  await sql`
    update conversions set attempts = ${attempts}, last_error_code = ${errorCodeOf(failure)},
      next_attempt_at = now() + make_interval(secs => ${retryDelayMs(attempts) / 1000})
    where id = ${round.id}`
}

async function setReason(sql: Sql, id: string, reason: string): Promise<void> {
  await sql`update conversions set reason = ${reason.slice(0, 500)}, updated_at = now() where id = ${id}`
}

async function advance(deps: ConvertDeps, round: Round): Promise<string> {
  switch (round.state) {
    case 'planned':
      return start(deps, round)
    case 'withdrawing':
      return withdrawing(deps, round)
    case 'swapping':
      return swapping(deps, round)
    case 'depositing':
      return depositing(deps, round)
    default:
      return round.state
  }
}

function indexE18(deps: ConvertDeps, round: Round): Promise<bigint> {
  return indexOf(deps, round.instrument)
}

/** planned → swapping: every check first (nothing moves on a refusal), then the amount fixed. */
async function start(deps: ConvertDeps, round: Round): Promise<string> {
  const { sql } = deps
  const wait = async (reason: string) => {
    await setReason(sql, round.id, reason)
    return 'waiting'
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
    await sql`update conversions set state = 'failed', reason = 'nothing to convert: the subaccount holds no unclaimed funds beyond the margin buffer',
      completed_at = ${deps.clock.now()}, updated_at = now() where id = ${round.id} and state = 'planned'`
    return 'failed'
  }
  const [moved] = await sql`
    update conversions set state = 'swapping', amount_in = ${amountIn.toString()}, reason = null, updated_at = now()
    where id = ${round.id} and state = 'planned' returning id`
  if (!moved) return 'raced'
  return swapping(deps, { ...round, state: 'swapping', amount_in: amountIn.toString() })
}

/** Rolls back a transaction whose conditional update found the round moved on. */
class RoundMovedError extends Error {}

async function loadTransfer(sql: Sql, id: string): Promise<TransferRow | undefined> {
  const [row] = await sql.unsafe<TransferRow[]>(`select ${TRANSFER_COLUMNS} from subaccount_transfers where id = $1`, [
    id,
  ])
  return row
}

/**
 * swapping → depositing: the ladder for this round's swap (same id each time: a restarted worker
 * resumes the same step). Executed → the bought amount's deposit is stored with the move; not
 * executed this run → the reason is kept and the next tick starts a new ladder run; abandoned
 * (older than SWAP_RETRY_STALE_AFTER_MS; the ladder alerted) → failed, and nothing moved.
 */
async function swapping(deps: ConvertDeps, round: Round): Promise<string> {
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
      },
    )
  } catch (e) {
    await setReason(deps.sql, round.id, `swap not started: ${errorMessage(e)}`)
    return 'swapping'
  }
  if (result.outcome === 'executed') {
    const bought = result.buyAmount as bigint
    const row = await storeMovement(deps, round, 'swapping', {
      kind: 'convert_in',
      method: 'deposit',
      currency: round.buy_currency,
      units: bought,
      set: { state: 'depositing', amountOut: bought },
    })
    if (!row) return 'raced'
    return depositing(
      deps,
      { ...round, state: 'depositing', amount_out: bought.toString(), in_transfer_id: row.id },
      true,
    )
  }
  if (result.outcome === 'abandoned') {
    await fail(deps, round, 'swapping', 'the swap was abandoned (SWAP_RETRY_STALE_AFTER_MS): nothing moved')
    return 'failed'
  }
  await setReason(
    deps.sql,
    round.id,
    `swap ${result.outcome}${result.error ? `: ${errorMessage(result.error)}` : ''}; retried next tick`,
  )
  return `swap_${result.outcome}`
}

/**
 * Signs a movement and stores it with the round's move out of `from`, in one transaction: the
 * action exists in the database before it is ever sent. Null when the round moved meanwhile.
 */
async function storeMovement(
  deps: ConvertDeps,
  round: Round,
  from: RoundState,
  m: {
    kind: 'convert_in' | 'convert_out'
    method: 'deposit' | 'withdraw'
    currency: string
    units: bigint
    set: { state: RoundState; amountOut?: bigint; reason?: string }
  },
): Promise<TransferRow | null> {
  const exchangeId = Number(round.exchange_id)
  const signed = await signMovement(deps, {
    method: m.method,
    subaccountId: exchangeId,
    currency: m.currency,
    amount: await exchangeAmount(deps.exchange, m.currency, m.units),
  })
  const column = m.kind === 'convert_in' ? 'in_transfer_id' : 'out_transfer_id'
  return deps.sql
    .begin(async (t) => {
      const tx = t as unknown as Sql
      const row = await insertSignedMovement(
        deps,
        tx,
        {
          kind: m.kind,
          method: m.method,
          userId: round.user_id,
          subaccountId: round.subaccount_id,
          exchangeSubaccountId: exchangeId,
          currency: m.currency,
          units: m.units,
        },
        signed,
      )
      const [ok] = await tx`
        update conversions set state = ${m.set.state}, ${tx(column)} = ${row.id},
          amount_out = coalesce(${m.set.amountOut === undefined ? null : m.set.amountOut.toString()}::numeric, amount_out),
          reason = ${m.set.reason ?? null}, updated_at = now()
        where id = ${round.id} and state = ${from}
          and ${tx(column)} is not distinct from ${(m.kind === 'convert_in' ? round.in_transfer_id : round.out_transfer_id) ?? null}::uuid
        returning id`
      if (!ok) throw new RoundMovedError()
      return row
    })
    .then(async (row) => {
      await deps.hooks?.afterStored?.(row)
      return row
    })
    .catch((e) => {
      if (e instanceof RoundMovedError) return null
      throw e
    })
}

/** A settled movement row: `done`, out of `from` only (a concurrent pass finds it moved and records nothing). */
async function markDone(t: Sql, row: TransferRow, transactionId: string, from: 'submitted' | 'accepted') {
  return markConversionTransferDone(t, row.id, { transactionId, from })
}

/** A movement that did not land: a fresh one for the same amount, stored with the round (same state). */
async function signAgain(
  deps: ConvertDeps,
  round: Round,
  row: TransferRow,
  state: 'depositing' | 'withdrawing',
): Promise<string> {
  const deposit = state === 'depositing'
  await storeMovement(deps, round, state, {
    kind: deposit ? 'convert_in' : 'convert_out',
    method: deposit ? 'deposit' : 'withdraw',
    currency: row.currency,
    units: BigInt(row.amount),
    set: { state, reason: `${deposit ? 'deposit' : 'withdraw'} signed again after: ${row.reason}` },
  })
  return deposit ? 'deposit_resigned' : 'withdraw_resigned'
}

/**
 * depositing → withdrawing: the bought amount goes from the exchange wallet into the subaccount
 * first, so the subaccount's margin never drops during the round (the sold amount leaves it only
 * after). On settlement the withdraw of the sold amount is stored with the move. A deposit that did
 * not land (the exchange wallet short of the bought currency, an expired signature) is signed
 * again next tick: the money is the user's and waits in the exchange wallet until it lands.
 */
async function depositing(deps: ConvertDeps, round: Round, firstSend = false): Promise<string> {
  const row = await loadTransfer(deps.sql, round.in_transfer_id as string)
  if (!row) throw new Error(`conversion ${round.id} lost its deposit row`)
  if (row.state === 'failed') return signAgain(deps, round, row, 'depositing')
  if (row.state !== 'done') {
    const outcome = await advanceMovement(
      deps,
      row,
      { exchangeSubaccountId: Number(round.exchange_id), firstSend },
      (t, transactionId, from) => markDone(t, row, transactionId, from),
    )
    if (outcome.kind === 'failed') await setReason(deps.sql, round.id, `deposit did not land: ${outcome.reason}`)
    if (outcome.kind !== 'settled') return 'depositing'
  }
  const out = await storeMovement(deps, round, 'depositing', {
    kind: 'convert_out',
    method: 'withdraw',
    currency: round.sell_currency,
    units: BigInt(round.amount_in as string),
    set: { state: 'withdrawing' },
  })
  if (!out) return 'raced'
  return withdrawing(deps, { ...round, state: 'withdrawing', out_transfer_id: out.id }, true)
}

/**
 * withdrawing → done: the sold amount leaves the subaccount for the exchange wallet; on settlement,
 * in the same transaction, the round ends and the wheel takes its new holding (with the cost basis
 * after a put). A withdraw refused or expired is signed again next tick (the reason shown; the
 * stuck alert fires after CONVERSION_STUCK_MINUTES): until it lands the subaccount holds both sides.
 */
async function withdrawing(deps: ConvertDeps, round: Round, firstSend = false): Promise<string> {
  const row = await loadTransfer(deps.sql, round.out_transfer_id as string)
  if (!row) throw new Error(`conversion ${round.id} lost its withdraw row`)
  if (row.state === 'failed') return signAgain(deps, round, row, 'withdrawing')
  const now = deps.clock.now()
  let [sold, bought, basis] = [0n, 0n, null as bigint | null]
  const outcome = await advanceMovement(
    deps,
    row,
    { exchangeSubaccountId: Number(round.exchange_id), firstSend },
    async (t, transactionId, from) => {
      if (!(await markDone(t, row, transactionId, from))) return false
      await t`update conversions set state = 'done', reason = null, completed_at = ${now}, updated_at = now()
        where id = ${round.id} and state = 'withdrawing'`
      const [r] = await t<{ amount_in: string; amount_out: string }[]>`
        select amount_in::text, amount_out::text from conversions where id = ${round.id}`
      ;[sold, bought] = [BigInt(r?.amount_in ?? '0'), BigInt(r?.amount_out ?? '0')]
      if (round.direction === 'to_underlying') {
        basis = costBasisAfter({
          strikeE18: BigInt(round.strike_e18),
          usdcIn: sold,
          settlementPaid: round.trigger === 'after_settlement' ? BigInt(round.settlement_cost ?? '0') : 0n,
          unitsOut: bought,
          decimals: decimalsOf(round.asset) ?? 18,
        })
        await t`update wheels set holding = 'underlying', cost_basis_e18 = ${basis.toString()}, updated_at = now()
          where id = ${round.wheel_id}`
      } else
        await t`update wheels set holding = 'cash', cost_basis_e18 = null, updated_at = now() where id = ${round.wheel_id}`
      return true
    },
  )
  if (outcome.kind === 'settled') {
    deps.log.info({ conversionId: round.id, direction: round.direction }, 'conversion round done')
    await decider(deps, { wheelId: round.wheel_id, userId: round.user_id, positionId: round.position_id }, now)(
      'conversion',
      'conversion_done',
      {
        conversion: {
          direction: round.direction,
          trigger: round.trigger,
          sold: amountOf(sold, round.sell_currency),
          bought: amountOf(bought, round.buy_currency),
          costBasis: basis === null ? null : e18Decimal(basis),
        },
      },
    )
    return 'done'
  }
  if (outcome.kind === 'failed') await setReason(deps.sql, round.id, `withdraw did not land: ${outcome.reason}`)
  return 'withdrawing'
}

async function fail(deps: ConvertDeps, round: Round, from: RoundState, reason: string): Promise<void> {
  const [moved] = await deps.sql`
    update conversions set state = 'failed', reason = ${reason.slice(0, 500)}, completed_at = ${deps.clock.now()},
      updated_at = now() where id = ${round.id} and state = ${from} returning id`
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

export const convertTick: TickDefinition = {
  name: CONVERT_TICK,
  queue: 'conversions',
  // CONVERSION_FAST_TICK_SECONDS (spec 8.3) sets the period; this is its default
  everyMs: 5_000,
  everyMsOf: (config) => config.conversionFastTickSeconds * 1000,
  process: async (_job, ctx) => {
    const d = ctx.deps
    return runConversions({
      ...d,
      log: ctx.log,
      preConvertLeadMinutes: d.config.preConvertLeadMinutes,
      stuckMinutes: d.config.conversionStuckMinutes,
    })
  },
}
