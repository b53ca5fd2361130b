/**
 * The sweep of one detected deposit (queue `deposits`, job `deposit-sweep`, run by job.ts, fanned
 * out by fan-out.ts): gas top-up if needed, the deposit address sends to the chain's hot wallet, and
 * once both are final, `deposit_swept` and the `gas_spent` events. docs/chains.md "Sweeps".
 *
 * Every step is resumable: the outbox keeps each transaction exactly once per
 * (purpose, deposit id, step), so a retry, a second replica or a worker restarted after SIGKILL
 * picks up the same transactions, and the journal's keys (spec 6.1 slots) keep the events single.
 * Step numbers: 0 the gas top-up, 1 the sweep. Every write of the deposit's row is
 * ../transitions.ts'; this module reads the chain and the outbox and decides.
 */
import { LOCK_TTL_MS, SWEEP_GAS_FLOOR_WEI } from '@wh/config'
import { AppError } from '@wh/core'
import { withLock } from '@wh/jobs'
import type { EventInput } from '@wh/ledger'
import {
  type Alerter,
  type ChainName,
  confirmOutbound,
  type DepositKeyring,
  estimateTransferFee,
  type OutboundRecord,
  type OutboundTransfer,
  type OutboxDeps,
  type OutboxSource,
  outboxOf,
  sendOnce,
  spendableEthBalance,
} from '@wh/wallet'
import { UnrecoverableError } from 'bullmq'
import type { Redis } from 'ioredis'
import { type Address, getAddress } from 'viem'
import type { DepositRow } from '../rows'
import {
  markRetryStarted,
  markSweepFailed,
  markSweepRetry,
  markSweepSent,
  markSwept,
  sweepGasEvent,
} from '../transitions'

/**
 * Fees move between the estimate that sizes a top-up (or a native sweep's value) and the moment
 * the sweep is signed with fresh fees: keep this multiple of the estimated maximum fee available.
 */
export const SWEEP_FEE_HEADROOM = 2n
/**
 * A token sweep is signed once the address holds this share (percent) of the fresh maximum fee;
 * below it, a top-up fills the address to SWEEP_FEE_HEADROOM × the fee. Between the two, fees may
 * rise by 60% after a top-up before another is needed: a drift of the estimate (a tenth of a
 * percent when a balance slot changes) never costs a second top-up, and never strands a sweep at
 * its bound. The margin above 100% covers the fee's move between this check and the signing, so
 * a stored sweep is always payable.
 */
export const SWEEP_SIGN_MARGIN_PCT = 125n
/**
 * Gas top-ups per sweep attempt (TIGER_STYLE: a bound). The second covers fees that rose between
 * the first top-up and the sweep; past it the deposit waits ('short-of-gas') and an operator is
 * alerted, so a fee spike cannot drain the gas wallet into one address.
 */
export const SWEEP_MAX_TOPUPS = 2
/**
 * Outbox step numbers of one sweep attempt: attempt `a` uses `a × SWEEP_STEPS_PER_ATTEMPT +`
 * TOPUP_STEPS[i] for its i-th top-up and `+ SWEEP_STEP` for the sweep. Attempt 0 is steps 0
 * (top-up), 1 (sweep), 2 (second top-up); an operator's retry after a failed sweep is attempt 1
 * (10, 11, 12), and so on: every transaction keeps its own (purpose, deposit id, step) row.
 */
export const SWEEP_STEPS_PER_ATTEMPT = 10
export const SWEEP_STEP = 1
export const TOPUP_STEPS = [0, 2] as const

/** What the sweep reads (the worker's deps satisfy it): the outbox's source and the keys that sign. */
export interface SweepDeps extends OutboxSource {
  /** the per-address lock */
  readonly redis: Redis
  /** spec 2.1 rule 4: a deposit address's own key signs its sweep */
  readonly keyring: DepositKeyring
  /** tops deposit addresses up with gas */
  readonly gasWallet: OutboundTransfer['signer']
  /** the chain's hot wallet: where a sweep sends */
  readonly hotWallet: (chain: ChainName) => { readonly address: Address }
  readonly alerter: Alerter
  readonly signerOf: NonNullable<OutboxDeps['signerOf']>
  /** tests only: the outbox's crash points */
  readonly outboxHooks?: OutboxDeps['hooks']
}

/**
 * 'swept': done (now or before); 'pending': a transaction is not final yet, run again later;
 * 'busy': another job holds this deposit address; 'short-of-gas': fees rose past both top-ups (an
 * operator is alerted); 'below-gas': an ETH deposit smaller than the fee of its own sweep (it stays
 * credited and at the address, tried again when fees may have fallen); 'held': a transaction of the
 * sweep is held for an operator (the chain contradicts itself about it); 'failed': a transaction
 * of the sweep failed on chain, its gas is journaled, the deposit is `failed` until an operator
 * retries it (`retryFailedSweep`).
 */
export type SweepOutcome = 'swept' | 'pending' | 'busy' | 'short-of-gas' | 'below-gas' | 'held' | 'failed' | 'not-found'

/** A top-up or sweep failed on chain (kept for callers that name it; the sweep now returns 'failed'). */
export class SweepFailedError extends AppError {
  constructor(details: Record<string, unknown>) {
    super({ code: 'SWEEP_FAILED', message: 'a sweep transaction failed on chain', details })
  }
}

/** `retryFailedSweep` was asked about a deposit that is not in state `failed`. */
export class SweepNotFailedError extends AppError {
  constructor(details: Record<string, unknown>) {
    super({ code: 'SWEEP_NOT_FAILED', statusCode: 409, message: 'only a failed sweep can be retried', details })
  }
}

interface OutboundRef {
  id: string
  step: number
  amount: bigint
  state: string
}

/** The outbox rows of this deposit's sweep (top-ups and sweeps of every attempt), by step. */
async function outboundRows(deps: SweepDeps, depositId: string): Promise<OutboundRef[]> {
  const rows = await deps.sql<{ id: string; step: number; amount: string; state: string; purpose: string }[]>`
    select id, step, amount, state, purpose from outbound_txs
    where ref_id = ${depositId} and purpose in ('gas_topup', 'sweep') order by step
  `
  return rows.map((r) => ({ id: r.id, step: Number(r.step), amount: BigInt(r.amount), state: r.state }))
}

function mined(r: OutboundRecord): boolean {
  return r.blockNumber !== undefined && r.state !== 'failed'
}

const attemptOf = (step: number) => Math.floor(step / SWEEP_STEPS_PER_ATTEMPT)

/**
 * Advances the sweep of deposit `depositId` as far as the chain allows now.
 *
 * @example
 *   const outcome = await sweepDeposit(deps, deposit.id) // 'swept' once both transactions are final
 */
export async function sweepDeposit(deps: SweepDeps, depositId: string): Promise<SweepOutcome> {
  const [d] = await deps.sql<DepositRow[]>`
    select id, chain, user_id, hd_index, address, token, amount, state from deposits where id = ${depositId}
  `
  if (!d) return 'not-found'
  if (d.state === 'swept') return 'swept'
  if (d.state === 'failed') return 'failed'
  // one sweep at a time per deposit address: two deposits to one address share its gas and nonces
  const outcome = await withLock(deps.redis, `lock:sweep:${d.chain}:${d.address.toLowerCase()}`, LOCK_TTL_MS, () =>
    advance(deps, d),
  )
  return outcome ?? 'busy'
}

/** Deposit states the sweep tick picks up (not 'swept', not 'failed': a failed sweep waits for an operator). */
export const SWEEPABLE_STATES = ['detected', 'sweeping', 'retry'] as const

/**
 * An operator's retry of a `failed` sweep: state 'retry', and the next run starts a new attempt
 * (new outbox steps; the failed attempt's transactions and gas stay recorded as they are).
 */
export async function retryFailedSweep(deps: Pick<SweepDeps, 'sql'>, depositId: string): Promise<void> {
  if (!(await markSweepRetry(deps.sql, depositId))) throw new SweepNotFailedError({ depositId })
}

/**
 * The sweep of one deposit is a state machine over its row and its outbox rows (docs/chains.md
 * "Sweeps"): `detected` or `retry` → `sendSweep` (top-ups mined, gas checked or topped up, the
 * sweep sent) → `sweeping` → `settleSweep` (the sweep and its top-ups final) → `swept`; a failed
 * transaction of the attempt → `fail` → `failed`, until an operator's retry starts the next attempt.
 * Each run takes the deposit as far as the chain allows now.
 */
async function advance(deps: SweepDeps, d: DepositRow): Promise<SweepOutcome> {
  const rows = await outboundRows(deps, d.id)
  const { attempt, unprocessedFailure } = await currentAttempt(deps, d, rows)
  const s = sweepOf(deps, d, attempt, rows)
  if (unprocessedFailure) return fail(deps, s.outbox, d, attempt)
  const stored = rows.find((r) => r.step === s.base + SWEEP_STEP)
  const sweep = stored ?? (await sendSweep(s))
  return typeof sweep === 'string' ? sweep : settleSweep(s, sweep)
}

/** What one run of a deposit's sweep works with: the deposit, its current attempt and its keys. */
interface SweepRun {
  readonly deps: SweepDeps
  readonly outbox: OutboxDeps
  readonly d: DepositRow
  readonly publicClient: NonNullable<ReturnType<SweepDeps['clients']['get']>>['publicClient']
  readonly signer: ReturnType<SweepDeps['keyring']['signer']>
  readonly hot: Address
  readonly amount: bigint
  readonly attempt: number
  /** the attempt's first outbox step */
  readonly base: number
  /** the attempt's top-ups sent so far */
  readonly topups: readonly OutboundRef[]
}

function sweepOf(deps: SweepDeps, d: DepositRow, attempt: number, rows: readonly OutboundRef[]): SweepRun {
  const clients = deps.clients.get(d.chain)
  if (!clients) throw new UnrecoverableError(`chain ${d.chain} is not configured`)
  // spec 2.1 rule 4: the address the user was shown signs its own sweep
  const signer = deps.keyring.signer(d.hd_index)
  if (signer.address !== getAddress(d.address)) {
    throw new UnrecoverableError(`deposit ${d.id}: derived signer does not match the stored deposit address`)
  }
  const base = attempt * SWEEP_STEPS_PER_ATTEMPT
  const topups = TOPUP_STEPS.map((t) => rows.find((r) => r.step === base + t)).filter(
    (r): r is OutboundRef => r !== undefined,
  )
  return {
    deps,
    outbox: outboxOf(deps, deps.outboxHooks),
    d,
    publicClient: clients.publicClient,
    signer,
    hot: deps.hotWallet(d.chain).address,
    amount: BigInt(d.amount),
    attempt,
    base,
    topups,
  }
}

/**
 * The current attempt: the last one; after an operator's retry (state 'retry') of a failed
 * attempt, the next one. A failed transaction in the current attempt without a retry is a failure
 * not processed yet (a crash between the outbox's verdict and fail()): the caller processes it.
 */
async function currentAttempt(
  deps: SweepDeps,
  d: DepositRow,
  rows: readonly OutboundRef[],
): Promise<{ attempt: number; unprocessedFailure: boolean }> {
  const last = rows.at(-1)
  const attempt = last ? attemptOf(last.step) : 0
  const failedNow = rows.some((r) => attemptOf(r.step) === attempt && r.state === 'failed')
  if (d.state !== 'retry') return { attempt, unprocessedFailure: failedNow }
  if (failedNow) return { attempt: attempt + 1, unprocessedFailure: false }
  await leaveRetry(deps, d)
  return { attempt, unprocessedFailure: false }
}

/** A top-up or sweep's transaction as the chain has it now: mined, or the outcome that stops this run. */
async function whenMined(s: SweepRun, id: string): Promise<'mined' | SweepOutcome> {
  const r = await confirmOutbound(s.outbox, id)
  if (r.state === 'held') return 'held'
  if (r.state === 'failed') return fail(s.deps, s.outbox, s.d, s.attempt)
  return mined(r) ? 'mined' : 'pending'
}

/**
 * The amount of an ETH sweep: the deposit pays its own gas, so the deposit minus the fee reserve
 * (what is left of the reserve stays at the address as gas for later sweeps from it). A deposit
 * that cannot pay its own sweep gets no top-up (it would spend more than it brings).
 */
function ethSweepAmount(amount: bigint, balanceWei: bigint, reserveWei: bigint): bigint | 'below-gas' | 'short-of-gas' {
  const spendable = balanceWei - reserveWei
  const sweepAmount = spendable < amount ? spendable : amount
  if (amount <= reserveWei) return 'below-gas'
  if (sweepAmount <= 0n) return 'short-of-gas'
  return sweepAmount
}

/** detected / retry → sweeping: the attempt's top-ups mined, the gas there (or topped up), the sweep sent. */
async function sendSweep(s: SweepRun): Promise<OutboundRef | SweepOutcome> {
  const { deps, d } = s
  // every top-up already sent must be mined before the balance says anything
  for (const t of s.topups) {
    const state = await whenMined(s, t.id)
    if (state !== 'mined') return state
  }
  // what the platform credited, never more: ETH nobody credited stays at the address and pays no
  // gas (docs/chains.md "Every deposit is accounted for")
  const balanceWei = await spendableEthBalance(deps.sql, s.publicClient, d.chain, d.address)
  const fee = await estimateTransferFee(s.outbox, {
    chain: d.chain,
    from: s.signer.address,
    to: s.hot,
    token: d.token,
    amountBaseUnits: s.amount,
  })
  const reserveWei = fee.maxFeeWei * SWEEP_FEE_HEADROOM
  let sweepAmount = s.amount
  if (d.token === 'ETH') {
    const planned = ethSweepAmount(s.amount, balanceWei, reserveWei)
    if (typeof planned === 'string') return planned
    sweepAmount = planned
  } else {
    const short = await ensureTokenSweepGas(s, balanceWei, fee.maxFeeWei, reserveWei)
    if (short !== undefined) return short
  }
  const step = s.base + SWEEP_STEP
  const rec = await sendOnce(s.outbox, {
    chain: d.chain,
    purpose: 'sweep',
    refId: d.id,
    step,
    signer: s.signer.account,
    to: s.hot,
    token: d.token,
    amountBaseUnits: sweepAmount,
  })
  await markSweepSent(deps.sql, d.id)
  return { id: rec.id, step, amount: sweepAmount, state: rec.state }
}

/**
 * A token sweep is signed only when the address holds SWEEP_SIGN_MARGIN_PCT of the fresh fee;
 * below it, a top-up fills it to the reserve (at most SWEEP_MAX_TOPUPS per attempt, then an
 * operator is alerted). Returns nothing when the sweep may be signed now.
 */
async function ensureTokenSweepGas(
  s: SweepRun,
  balanceWei: bigint,
  maxFeeWei: bigint,
  reserveWei: bigint,
): Promise<SweepOutcome | undefined> {
  const { deps, d } = s
  const fillWei = reserveWei > SWEEP_GAS_FLOOR_WEI ? reserveWei : SWEEP_GAS_FLOOR_WEI
  const signWei = (maxFeeWei * SWEEP_SIGN_MARGIN_PCT + 99n) / 100n
  const needWei = signWei > SWEEP_GAS_FLOOR_WEI ? signWei : SWEEP_GAS_FLOOR_WEI
  if (balanceWei >= needWei) return undefined
  if (s.topups.length >= SWEEP_MAX_TOPUPS) {
    // fees rose past every top-up this attempt may send: an operator decides
    await deps.alerter.alert('deposit sweep short of gas after the last top-up', {
      depositId: d.id,
      chain: d.chain,
      address: d.address,
      balanceWei: balanceWei.toString(),
      needWei: needWei.toString(),
    })
    return 'short-of-gas'
  }
  // the first top-up, or a second one when fees rose between the first and the sweep
  const rec = await sendOnce(s.outbox, {
    chain: d.chain,
    purpose: 'gas_topup',
    refId: d.id,
    step: s.base + (TOPUP_STEPS[s.topups.length] as number),
    signer: deps.gasWallet,
    to: s.signer.address,
    token: 'ETH',
    amountBaseUnits: fillWei - balanceWei,
  })
  await leaveRetry(deps, d)
  const state = await whenMined(s, rec.id)
  if (state !== 'mined') return state
  // mined: the balance now covers the sweep at the fees that sized this top-up, unless they
  // rose again; the next run re-checks before signing (never signs a sweep it cannot pay)
  if (s.topups.length + 1 < SWEEP_MAX_TOPUPS) {
    const after = await spendableEthBalance(deps.sql, s.publicClient, d.chain, d.address)
    if (after < needWei) return 'pending'
  }
  return undefined
}

/** sweeping → swept: the sweep confirmed and every top-up of the attempt final, recorded in one commit. */
async function settleSweep(s: SweepRun, sweep: OutboundRef): Promise<SweepOutcome> {
  const { deps, d } = s
  const r = await confirmOutbound(s.outbox, sweep.id)
  if (r.state === 'held') return 'held'
  if (r.state === 'failed') return fail(deps, s.outbox, d, s.attempt)
  if (r.state !== 'confirmed') return 'pending'
  const paid: OutboundRecord[] = []
  for (const t of await topupsOf(deps, d.id, s.attempt)) {
    const tr = await confirmOutbound(s.outbox, t.id)
    if (tr.state === 'held') return 'held'
    if (tr.state !== 'confirmed') return 'pending'
    paid.push(tr)
  }
  await markSwept(deps.sql, d, r, sweep.amount, paid)
  return 'swept'
}

/**
 * A retried deposit leaves 'retry' once its new attempt has a transaction: from then on a failed
 * transaction of that attempt is a new failure to process, not the reason for another attempt.
 */
async function leaveRetry(deps: SweepDeps, d: DepositRow): Promise<void> {
  if (d.state !== 'retry') return
  await markRetryStarted(deps.sql, d.id)
  d.state = 'detected'
}

async function topupsOf(deps: SweepDeps, depositId: string, attempt: number): Promise<OutboundRef[]> {
  const base = attempt * SWEEP_STEPS_PER_ATTEMPT
  return (await outboundRows(deps, depositId)).filter((r) => TOPUP_STEPS.some((s) => r.step === base + s))
}

/**
 * A transaction of this attempt failed on chain (reverted, or its nonce was taken by another
 * transaction). Nothing reached the hot wallet, so there is no `deposit_swept`; gas that was burnt
 * is still spent: each mined transaction of the attempt gets its `gas_spent` at slot 0, its only
 * event (a reverted sweep's gas included). One commit with the deposit's move to `failed`, then
 * one alert. The funds stay at the deposit address; `retryFailedSweep` starts a new attempt.
 */
async function fail(deps: SweepDeps, outbox: OutboxDeps, d: DepositRow, attempt: number): Promise<SweepOutcome> {
  const base = attempt * SWEEP_STEPS_PER_ATTEMPT
  const rows = (await outboundRows(deps, d.id)).filter((r) => attemptOf(r.step) === attempt)
  const occurredAt = new Date()
  const events: EventInput[] = []
  const failedTx: Array<{ step: number; txHash: string; reason: string | null }> = []
  for (const row of rows) {
    const r = await confirmOutbound(outbox, row.id)
    if (r.state === 'failed') {
      const [e] = await deps.sql<{ error: string | null }[]>`select error from outbound_txs where id = ${r.id}`
      failedTx.push({ step: row.step - base, txHash: r.txHash, reason: e?.error ?? null })
    }
    // a mined transaction paid its fee, reverted or not; one never mined paid nothing
    if (r.gasUsed !== undefined && (r.state === 'failed' || r.state === 'confirmed')) {
      events.push(sweepGasEvent(d, r, 0, occurredAt))
    } else if (r.state !== 'failed') {
      return 'pending' // another transaction of the attempt is not final yet
    }
  }
  if (await markSweepFailed(deps.sql, d.id, events)) {
    await deps.alerter.alert('deposit sweep failed on chain; the funds stay at the deposit address', {
      depositId: d.id,
      chain: d.chain,
      address: d.address,
      token: d.token,
      amountBaseUnits: d.amount,
      failed: failedTx.map((f) => `${f.step === SWEEP_STEP ? 'sweep' : 'top-up'} ${f.txHash} (${f.reason})`).join('; '),
    })
  }
  return 'failed'
}
