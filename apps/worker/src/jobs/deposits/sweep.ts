/**
 * The sweep of one detected deposit (queue `deposits`, job `deposit-sweep`, fanned out by
 * sweep-tick.ts): gas top-up if needed, the deposit address sends to the chain's hot wallet, and
 * once both are final, `deposit_swept` and the `gas_spent` events. docs/chains.md "Sweeps".
 *
 * Every step is resumable: the outbox keeps each transaction exactly once per
 * (purpose, deposit id, step), so a retry, a second replica or a worker restarted after SIGKILL
 * picks up the same transactions, and the journal's keys (spec 6.1 slots) keep the events single.
 * Step numbers: 0 the gas top-up, 1 the sweep.
 */
import { LOCK_TTL_MS, SWEEP_GAS_FLOOR_WEI } from '@wh/config'
import { AppError } from '@wh/core'
import { withLock } from '@wh/jobs'
import { appendBatch, type EventInput } from '@wh/ledger'
import {
  type ChainName,
  confirmOutbound,
  estimateTransferFee,
  feePaidWei,
  type OutboundRecord,
  type OutboxDeps,
  sendOnce,
} from '@wh/wallet'
import { UnrecoverableError } from 'bullmq'
import { type Address, getAddress } from 'viem'
import type { TickDefinition, WorkerDeps } from '../../ticks'

export const DEPOSIT_SWEEP_JOB = 'deposit-sweep'
/**
 * Fees move between the estimate that sizes a top-up (or a native sweep's value) and the moment
 * the sweep is signed with fresh fees: keep this multiple of the estimated maximum fee available.
 */
export const SWEEP_FEE_HEADROOM = 2n

export type SweepDeps = Pick<
  WorkerDeps,
  'sql' | 'redis' | 'keyring' | 'registry' | 'clients' | 'gasWallet' | 'hotWallet'
> & { readonly outboxHooks?: OutboxDeps['hooks'] }

/**
 * 'swept': done (now or before); 'pending': a transaction is not final yet, run again later;
 * 'busy': another job holds this deposit address; 'short-of-gas': see the log, an operator decides.
 */
export type SweepOutcome = 'swept' | 'pending' | 'busy' | 'short-of-gas' | 'not-found'

/** A top-up or sweep failed on chain: the deposit needs an operator (its gas is recorded). */
export class SweepFailedError extends AppError {
  constructor(details: Record<string, unknown>) {
    super({ code: 'SWEEP_FAILED', message: 'a sweep transaction failed on chain', details })
  }
}

interface DepositRow {
  id: string
  chain: ChainName
  user_id: string
  hd_index: number
  address: string
  token: 'ETH' | 'USDC'
  amount: string
  state: string
}

async function outboundOf(
  deps: SweepDeps,
  purpose: 'gas_topup' | 'sweep',
  depositId: string,
  step: number,
): Promise<{ id: string; amount: bigint } | undefined> {
  const [row] = await deps.sql<{ id: string; amount: string }[]>`
    select id, amount from outbound_txs where purpose = ${purpose} and ref_id = ${depositId} and step = ${step}
  `
  return row ? { id: row.id, amount: BigInt(row.amount) } : undefined
}

async function failure(deps: SweepDeps, d: DepositRow, step: number, r: OutboundRecord): Promise<SweepFailedError> {
  const [row] = await deps.sql<{ error: string | null }[]>`select error from outbound_txs where id = ${r.id}`
  return new SweepFailedError({ depositId: d.id, step, txHash: r.txHash, reason: row?.error ?? null })
}

function mined(r: OutboundRecord): boolean {
  return r.blockNumber !== undefined && r.state !== 'failed'
}

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
  // one sweep at a time per deposit address: two deposits to one address share its gas and nonces
  const outcome = await withLock(deps.redis, `lock:sweep:${d.chain}:${d.address.toLowerCase()}`, LOCK_TTL_MS, () =>
    advance(deps, d),
  )
  return outcome ?? 'busy'
}

async function advance(deps: SweepDeps, d: DepositRow): Promise<SweepOutcome> {
  const outbox: OutboxDeps = {
    sql: deps.sql,
    clients: deps.clients,
    registry: deps.registry,
    ...(deps.outboxHooks ? { hooks: deps.outboxHooks } : {}),
  }
  const clients = deps.clients.get(d.chain)
  if (!clients) throw new UnrecoverableError(`chain ${d.chain} is not configured`)
  // spec 2.1 rule 4: the address the user was shown signs its own sweep
  const signer = deps.keyring.signer(d.hd_index)
  if (signer.address !== getAddress(d.address)) {
    throw new UnrecoverableError(`deposit ${d.id}: derived signer does not match the stored deposit address`)
  }
  const hot: Address = deps.hotWallet(d.chain).address
  const amount = BigInt(d.amount)

  let topup = await outboundOf(deps, 'gas_topup', d.id, 0)
  let sweep = await outboundOf(deps, 'sweep', d.id, 1)

  if (!sweep) {
    if (topup) {
      const t = await confirmOutbound(outbox, topup.id)
      if (t.state === 'failed') throw await failure(deps, d, 0, t)
      if (!mined(t)) return 'pending'
    }
    const balanceWei = await clients.publicClient.getBalance({ address: signer.address })
    const fee = await estimateTransferFee(outbox, {
      chain: d.chain,
      from: signer.address,
      to: hot,
      token: d.token,
      amountBaseUnits: amount,
    })
    const reserveWei = fee.maxFeeWei * SWEEP_FEE_HEADROOM
    let sweepAmount = amount
    if (d.token === 'ETH') {
      // the deposit pays its own gas: send the deposit minus the fee reserve (what is left of the
      // reserve stays at the address as gas for later sweeps from it)
      const spendable = balanceWei - reserveWei
      sweepAmount = spendable < amount ? spendable : amount
      if (sweepAmount <= 0n) return 'short-of-gas'
    } else {
      const needWei = reserveWei > SWEEP_GAS_FLOOR_WEI ? reserveWei : SWEEP_GAS_FLOOR_WEI
      if (balanceWei < needWei) {
        if (topup) return 'short-of-gas' // fees rose past the top-up already sent: an operator decides
        const rec = await sendOnce(outbox, {
          chain: d.chain,
          purpose: 'gas_topup',
          refId: d.id,
          step: 0,
          signer: deps.gasWallet,
          to: signer.address,
          token: 'ETH',
          amountBaseUnits: needWei - balanceWei,
        })
        topup = { id: rec.id, amount: needWei - balanceWei }
        const t = await confirmOutbound(outbox, rec.id)
        if (t.state === 'failed') throw await failure(deps, d, 0, t)
        if (!mined(t)) return 'pending'
      }
    }
    const rec = await sendOnce(outbox, {
      chain: d.chain,
      purpose: 'sweep',
      refId: d.id,
      step: 1,
      signer: signer.account,
      to: hot,
      token: d.token,
      amountBaseUnits: sweepAmount,
    })
    sweep = { id: rec.id, amount: sweepAmount }
    await deps.sql`update deposits set state = 'sweeping', updated_at = now() where id = ${d.id} and state = 'detected'`
  }

  const s = await confirmOutbound(outbox, sweep.id)
  if (s.state === 'failed') throw await failure(deps, d, 1, s)
  if (s.state !== 'confirmed') return 'pending'
  let t: OutboundRecord | undefined
  if (topup) {
    t = await confirmOutbound(outbox, topup.id)
    if (t.state !== 'confirmed') return 'pending'
  }
  await record(deps, d, s, sweep.amount, t)
  return 'swept'
}

/**
 * The journal side, with the deposit's state, in one commit: `deposit_swept` (no postings, slot 0
 * of the sweep), the sweep's fee as `gas_spent` (slot 1 of the same transaction) and the top-up's
 * fee as `gas_spent` (slot 0 of the top-up: its only event). Gas is attributed to the user and
 * borne by the platform (platform:expense:gas:{chain}).
 */
async function record(
  deps: SweepDeps,
  d: DepositRow,
  sweep: OutboundRecord,
  sweptAmount: bigint,
  topup: OutboundRecord | undefined,
): Promise<void> {
  const occurredAt = new Date()
  const events: EventInput[] = [
    {
      type: 'deposit_swept',
      payload: { userId: d.user_id, chain: d.chain, txHash: sweep.txHash, currency: d.token, amount: sweptAmount },
      occurredAt,
    },
    {
      type: 'gas_spent',
      payload: {
        chain: d.chain,
        txHash: sweep.txHash,
        slot: 1,
        currency: 'ETH',
        amount: feePaidWei(sweep),
        userId: d.user_id,
      },
      occurredAt,
    },
  ]
  if (topup) {
    events.push({
      type: 'gas_spent',
      payload: {
        chain: d.chain,
        txHash: topup.txHash,
        slot: 0,
        currency: 'ETH',
        amount: feePaidWei(topup),
        userId: d.user_id,
      },
      occurredAt,
    })
  }
  await deps.sql.begin(async (tx) => {
    await appendBatch(tx, events)
    await tx`update deposits set state = 'swept', updated_at = now() where id = ${d.id}`
  })
}

/** The processor of the jobs sweep-tick.ts fans out: one per deposit, `{ depositId }`. */
export const depositSweepProcessor: TickDefinition = {
  name: DEPOSIT_SWEEP_JOB,
  queue: 'deposits',
  process: async (job, ctx) => {
    const depositId = (job.data as { depositId?: unknown }).depositId
    if (typeof depositId !== 'string' || !/^[0-9a-f-]{36}$/.test(depositId)) {
      throw new UnrecoverableError('deposit-sweep needs { depositId: uuid }')
    }
    const outcome = await sweepDeposit(ctx.deps, depositId)
    if (outcome === 'short-of-gas') ctx.log.warn({ depositId }, 'deposit sweep waits for gas')
    return { depositId, outcome }
  },
}
