/**
 * The treasury (the worker's tick `treasury-ethereum`, queue `treasury`, every 60 s, under the exchange cycle
 * lock; Derive v3 only): money out on L1, the
 * bridge in reverse (docs/chains.md "Treasury"). When the Ethereum hot wallet's USDC, less its
 * `requested` USDC withdrawals, is under TREASURY_FLOOR_USDC (at most BRIDGE_RETAIN_USDC), it withdraws
 * the shortfall up to BRIDGE_RETAIN_USDC (at most TREASURY_MAX_WITHDRAW_USDC, and at most what the
 * funding subaccount holds free) from the funding subaccount with a signed `private/withdraw` whose
 * recipient is the hot wallet. Derive pays it out on L1 when its batch settles (docs/exchange-v3.md
 * "Money out"); once that payout is final the journal records `bridged` derive → ethereum (ownTxKey
 * slot 0 of the L1 transaction under the chain `derive`; what the exchange kept, amount − paid, as overhead).
 *
 * Crash safety: the signed action is stored (treasury_withdrawals, treasury/store.ts) before it is
 * sent, and at most one is open per chain (a unique index). A run first resumes the open one: sends
 * the stored action again, or finds it in the exchange's withdrawal history when an earlier run's send
 * may have landed (a replay is refused for its nonce), then waits for its payout; only a run that
 * finds none open signs another. The journal's key makes `bridged` land once, in the transaction
 * that closes the row.
 */
import { fromBaseUnits, minBigint, toBaseUnits, USDC_DECIMALS } from '@wh/core'
import { type DeriveClient, ExchangeError, nonceToMs, RPC } from '@wh/exchange'
import { appendBatch } from '@wh/ledger'
import { fundingSubaccountClaims, HISTORY_SKEW_MS, LANDED_GRACE_SEC, withCycleLock } from '@wh/subaccounts'
import { type ChainName, EXCHANGE_CHAIN_NAME, hotWalletUsdc, requestedUsdc } from '@wh/wallet'
import { type Address, getAddress, type Hex } from 'viem'
import { BRIDGE_MIN_BASE_UNITS } from '../bridge/bridge'
import { l2Demand } from '../cctp/plan'
import { type Log, summaryOf, type TreasuryDeps } from '../deps'
import { l1PayoutOf } from './payout'
import {
  insertSigned,
  markFailed,
  markPaid,
  markSent,
  noteProblem,
  noteQueued,
  openWithdrawal,
  opUuidTaken,
  type TreasuryRow,
} from './store'

/** Derive v3 pays out on its L1 only: the other chains' hot wallets are not refilled (docs/chains.md "Treasury"). */
export const TREASURY_CHAIN: ChainName = 'ethereum'
/** Below this shortfall (1 USDC) a withdrawal is not worth its fee. */
export const TREASURY_MIN_BASE_UNITS = BRIDGE_MIN_BASE_UNITS

/** Test hooks: a throw stands for a crash at that point. */
export interface TreasuryRunOptions {
  /** after the signed action is stored, before it is sent */
  readonly afterStore?: () => Promise<void> | void
  /** after the exchange accepted it, before the row records that */
  readonly afterSend?: () => Promise<void> | void
  /** after the payout is seen final, before the journal's commit */
  readonly beforeRecord?: () => Promise<void> | void
}

export type TreasuryRunResult =
  | { readonly status: 'off'; readonly reason: string }
  | { readonly status: 'idle'; readonly shortfallBaseUnits: bigint }
  /** short, but the funding subaccount cannot give TREASURY_MIN_BASE_UNITS past the withdrawal fee */
  | { readonly status: 'short'; readonly shortfallBaseUnits: bigint; readonly fundingFreeBaseUnits: bigint }
  | { readonly status: 'pending'; readonly withdrawalId: string; readonly reason: string }
  | { readonly status: 'failed'; readonly withdrawalId: string; readonly reason: string }
  | {
      readonly status: 'refilled'
      readonly withdrawalId: string
      readonly opUuid: string
      readonly l1TxHash: Hex
      readonly amountBaseUnits: bigint
      readonly feeBaseUnits: bigint
    }

interface TreasurySetup {
  readonly client: DeriveClient
  readonly outbox: Address
  readonly funding: number
  readonly hot: Address
}

function treasurySetup(deps: TreasuryDeps): TreasurySetup | { reason: string } {
  const x = deps.config.exchange
  if (!x.withdrawalOutbox) return { reason: 'EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS is not set' }
  if (!x.fundingSubaccountId) return { reason: 'EXCHANGE_FUNDING_SUBACCOUNT_ID is not set' }
  // the trading key holds no withdraw scope: payouts are the payout key's duty (docs/operations.md)
  if (!deps.config.keys.payoutSessionKey) return { reason: 'EXCHANGE_PAYOUT_SESSION_KEY is not set' }
  return {
    client: deps.exchange,
    outbox: x.withdrawalOutbox,
    funding: x.fundingSubaccountId,
    hot: getAddress(deps.hotWallet(TREASURY_CHAIN).address),
  }
}

/**
 * What the hot wallet lacks, in base units: when its USDC less the requested withdrawals is under the floor
 * (at most BRIDGE_RETAIN_USDC, so the bridge never sends back what this brought), up to BRIDGE_RETAIN_USDC; else ≤ 0.
 */
export function shortfallOf(p: { balance: bigint; requested: bigint; floor: bigint; retain: bigint }): bigint {
  const free = p.balance - p.requested
  const floor = minBigint(p.floor, p.retain)
  return free >= floor ? 0n : p.retain - free
}

/**
 * What to withdraw for a shortfall, in base units: the shortfall, at most `max` and what the funding
 * subaccount holds free; 0 when that would not bring TREASURY_MIN_BASE_UNITS past the fee. Derive takes its
 * fee (up to `feeCap`, USDC at par) out of the amount and refuses a withdrawal the fee would swallow, so
 * one that small is never signed: it would fail, alert, and be tried again every run.
 */
export function withdrawalAmountOf(p: { shortfall: bigint; max: bigint; free: bigint; feeCap: bigint }): bigint {
  const amount = minBigint(minBigint(p.shortfall, p.max), p.free)
  return amount - p.feeCap < TREASURY_MIN_BASE_UNITS ? 0n : amount
}

/** The funding subaccount's USDC that no funding or top-up in flight has claimed, in base units. */
async function fundingFree(deps: TreasuryDeps, s: TreasurySetup): Promise<bigint> {
  const sub = await s.client.getSubaccount(s.funding)
  const usdc = sub.collaterals.find((c) => c.asset_name === 'USDC')?.amount ?? '0'
  const held = toBaseUnits(usdc, USDC_DECIMALS, 'down')
  return held - (await fundingSubaccountClaims(deps.sql, 'USDC', USDC_DECIMALS))
}

/** Decides and, when short, signs and stores a new withdrawal (not sent yet). */
async function startNew(deps: TreasuryDeps, s: TreasurySetup): Promise<TreasuryRow | TreasuryRunResult> {
  // what the L2s need from L1 now counts as owed from here (docs/chains.md "Rebalancing"): refills leave from it
  const [balance, requestedHere, l2] = await Promise.all([
    hotWalletUsdc(deps, TREASURY_CHAIN),
    requestedUsdc(deps, TREASURY_CHAIN),
    l2Demand(deps),
  ])
  const requested = requestedHere + l2
  const t = deps.config.treasury
  const retain = deps.config.bridgeRetainUsdcBaseUnits
  const shortfall = shortfallOf({ balance, requested, floor: t.floorUsdcBaseUnits, retain })
  if (shortfall < TREASURY_MIN_BASE_UNITS) return { status: 'idle', shortfallBaseUnits: shortfall }
  const free = await fundingFree(deps, s)
  const feeCap = toBaseUnits(t.withdrawMaxFeeUsd, USDC_DECIMALS, 'up')
  const amount = withdrawalAmountOf({ shortfall, max: t.maxWithdrawUsdcBaseUnits, free, feeCap })
  if (amount === 0n) return { status: 'short', shortfallBaseUnits: shortfall, fundingFreeBaseUnits: free }
  const params = await s.client.signFundingWithdrawal({
    asset_name: 'USDC',
    amount: fromBaseUnits(amount, USDC_DECIMALS),
    max_fee_usd: t.withdrawMaxFeeUsd,
    recipient: s.hot,
  })
  return insertSigned(deps.sql, { chain: TREASURY_CHAIN, currency: 'USDC', amount, params })
}

/** The row's withdrawal in the exchange's history (an earlier run's send that landed): its operation uuid. */
async function findLanded(deps: TreasuryDeps, s: TreasurySetup, row: TreasuryRow): Promise<string | undefined> {
  // from when it was signed, by whichever clock is earlier: the row's (the database's) or the action's nonce
  // (the worker's, which follows the exchange's); the history is stamped by the exchange's clock
  const signedAtMs = Math.min(row.created_at.getTime(), nonceToMs(BigInt(row.params.nonce)))
  const { events } = await s.client.getL1WithdrawalHistory({
    subaccount_id: s.funding,
    start_timestamp: signedAtMs - HISTORY_SKEW_MS,
  })
  const amount = BigInt(row.amount)
  for (const e of events) {
    if (e.asset !== row.currency || getAddress(e.recipient) !== s.hot) continue
    if (toBaseUnits(e.amount, USDC_DECIMALS, 'down') !== amount) continue
    if (!(await opUuidTaken(deps.sql, e.tx_hash, row.id))) return e.tx_hash
  }
  return undefined
}

async function fail(deps: TreasuryDeps, row: TreasuryRow, reason: string): Promise<TreasuryRunResult> {
  await markFailed(deps.sql, row.id, reason)
  await deps.alerter.alert('treasury withdrawal failed; nothing moved, the funds stay at the exchange', {
    chain: row.chain,
    withdrawalId: row.id,
    amount: row.amount,
    reason,
  })
  return { status: 'failed', withdrawalId: row.id, reason }
}

/**
 * Sends the stored action. `firstSend`: this run signed it a moment ago, so a refusal proves nothing
 * landed; a row found `signed` may have been sent by a run that died, so it is looked for first, and a
 * replay refused for its nonce waits for the history until the signature's expiry and a grace have passed.
 */
async function send(
  deps: TreasuryDeps,
  s: TreasurySetup,
  row: TreasuryRow,
  firstSend: boolean,
): Promise<{ opUuid: string } | TreasuryRunResult> {
  if (!firstSend) {
    const landed = await findLanded(deps, s, row)
    if (landed) return { opUuid: landed }
  }
  try {
    return { opUuid: (await s.client.sendFundingWithdrawal(row.params)).op_uuid }
  } catch (err) {
    if (!(err instanceof ExchangeError) || err.retryable) throw err // unknown outcome: the next run resumes
    const replay = err.rpcCode === RPC.NONCE_NOT_UNIQUE || err.rpcCode === RPC.INVALID_SIGNATURE_EXPIRY
    const pastGrace = deps.clock.now().getTime() / 1000 > row.params.signature_expiry_sec + LANDED_GRACE_SEC
    if (replay && !pastGrace)
      return { status: 'pending', withdrawalId: row.id, reason: `${err.message}; not in the history yet` }
    return fail(deps, row, replay ? `${err.message}; not found in the history past the signature` : err.message)
  }
}

/** What the row's reason says while the outbox's throttle holds the rest: one text, so ops are told once. */
export const QUEUED_REASON = "the outbox's throttle queued the payout; followed until paid"

/**
 * A sent withdrawal: its batch, then its L1 payout; journaled and closed once paid whole and final.
 * Queued by the outbox's throttle: pending (counted in flight) and followed run after run, ops told once.
 */
async function settle(
  deps: TreasuryDeps,
  s: TreasurySetup,
  row: TreasuryRow & { op_uuid: string },
  opts: TreasuryRunOptions,
): Promise<TreasuryRunResult> {
  const tx = await s.client.getTransaction(row.op_uuid)
  const pending = (reason: string) => ({ status: 'pending' as const, withdrawalId: row.id, reason })
  if (tx.status === 'reverted') return fail(deps, row, `its batch failed: ${JSON.stringify(tx.data)}`)
  if (tx.status !== 'settled') return pending('its batch has not settled')
  const txHash = (tx.data as { transaction_hash?: Hex | null }).transaction_hash
  if (!txHash) return pending('the settled batch names no L1 transaction')
  const asset = getAddress((await s.client.getCurrency(row.currency)).protocol_asset_addresses.spot as string)
  const payout = await l1PayoutOf(deps, TREASURY_CHAIN, {
    txHash,
    outbox: s.outbox,
    recipient: s.hot,
    asset,
    knownIds: row.outbox_ids,
  })
  if (payout.state === 'pending') return pending(payout.reason)
  const amount = BigInt(row.amount)
  if (payout.state === 'problem' || payout.paid > amount) {
    // money left the subaccount and did not arrive whole: a person looks (told once per reason); the row stays open
    const reason = payout.state === 'problem' ? payout.reason : `paid ${payout.paid}, more than the ${amount} withdrawn`
    if (await noteProblem(deps.sql, row.id, reason))
      await deps.alerter.alert('treasury withdrawal settled but not paid as expected', {
        withdrawalId: row.id,
        txHash,
        problem: reason,
      })
    return pending(reason)
  }
  if (payout.state === 'queued') {
    // Derive's L1 throttle holds the rest: the row stays open (in flight) and is followed; told once
    if (await noteQueued(deps.sql, row.id, { outboxIds: payout.ids, reason: QUEUED_REASON }))
      await deps.alerter.alert('treasury withdrawal queued by the outbox throttle on L1; followed until paid', {
        withdrawalId: row.id,
        txHash,
        outboxIds: payout.ids.join(','),
        paid: payout.paid.toString(),
        queued: payout.remaining.toString(),
      })
    return pending(`${QUEUED_REASON}: ${payout.paid} paid, ${payout.remaining} queued`)
  }
  const fee = amount - payout.paid
  await opts.beforeRecord?.()
  await deps.sql.begin(async (t) => {
    await appendBatch(t, [
      {
        type: 'bridged',
        // key tx:derive:{txHash}:0 (ownTxKey of the L1 transaction that paid it, under the exchange's chain name)
        payload: {
          fromChain: EXCHANGE_CHAIN_NAME,
          toChain: TREASURY_CHAIN,
          txHash,
          currency: row.currency,
          amount,
          feeAmount: fee,
        },
        occurredAt: deps.clock.now(),
      },
    ])
    await markPaid(t, row.id, { l1TxHash: txHash, fee, outboxIds: payout.ids })
  })
  return {
    status: 'refilled',
    withdrawalId: row.id,
    opUuid: row.op_uuid,
    l1TxHash: txHash,
    amountBaseUnits: amount,
    feeBaseUnits: fee,
  }
}

/** One run: resume the open withdrawal, or start one for the shortfall. Call it under the exchange cycle lock (the tick does). */
export async function runTreasury(deps: TreasuryDeps, opts: TreasuryRunOptions = {}): Promise<TreasuryRunResult> {
  const s = treasurySetup(deps)
  if ('reason' in s) return { status: 'off', reason: s.reason }
  const open = await openWithdrawal(deps.sql, TREASURY_CHAIN)
  const started = open ?? (await startNew(deps, s))
  if ('status' in started) return started
  let row = started
  if (row.state === 'signed') {
    if (!open) await opts.afterStore?.()
    const sent = await send(deps, s, row, !open)
    if ('status' in sent) return sent
    await opts.afterSend?.()
    await markSent(deps.sql, row.id, sent.opUuid)
    row = { ...row, state: 'sent', op_uuid: sent.opUuid }
  }
  if (row.op_uuid === null) throw new Error(`treasury withdrawal ${row.id} is sent but has no operation uuid`)
  return settle(deps, s, { ...row, op_uuid: row.op_uuid }, opts)
}

/**
 * The tick's run: runTreasury under the exchange cycle lock (`locked` when another process holds it), its result as
 * BullMQ stores it; logged unless idle or off.
 */
export async function runTreasuryTick(deps: TreasuryDeps, log: Log): Promise<Record<string, unknown>> {
  // the exchange cycle lock: the funding subaccount signs fundings and this withdrawal in one nonce
  // order across processes, and what it holds free is read with no funding in between
  const r = await withCycleLock(deps.redis, () => runTreasury(deps))
  if (!r.ran) return { status: 'locked' }
  const result = r.value
  const summary = summaryOf(result)
  if (result.status !== 'idle' && result.status !== 'off') log.info(summary, 'treasury tick')
  return summary
}
