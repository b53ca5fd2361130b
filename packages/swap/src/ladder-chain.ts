/**
 * The ladder's side of the chain (docs/swaps.md "The ladder"): waiting for a step's transaction to
 * be final, the allowances a swap needs, and the journal events of a step's outcome. The state
 * machine that calls these is in ladder.ts.
 */
import type { Sql } from '@wh/db'
import { appendBatch, type EventInput } from '@wh/ledger'
import {
  type ChainName,
  confirmOutbound,
  feePaidWei,
  type OutboundCall,
  type OutboundRecord,
  sendOnce,
} from '@wh/wallet'
import { BaseError, ExecutionRevertedError, getAddress } from 'viem'
import type { ApprovalCall } from './adapter'
import { InvalidSwapRequestError, SwapApprovalFailedError } from './errors'
import type { SwapDeps, SwapRequest } from './ladder-types'

/** The native currency gas is paid in, on every chain of the registry. */
export const GAS_CURRENCY = 'ETH'
/** How often a sent step's receipt is read, and how many times before the call returns 'pending'. */
export const RECEIPT_POLL_MS = 250
export const MAX_RECEIPT_POLLS = 120

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** The outbox row's `token` (bookkeeping: which money the call moves) for a ledger currency. */
export function outboxToken(currency: string): OutboundCall['token'] {
  if (currency !== 'ETH' && currency !== 'USDC')
    throw new InvalidSwapRequestError('the outbox books only ETH and USDC', { currency })
  return currency
}

/** The node refused the call at estimation with a revert: sending it would only burn gas. */
export function isExecutionRevert(e: unknown): boolean {
  return e instanceof BaseError && e.walk((x) => x instanceof ExecutionRevertedError) !== null
}

/** Polls the outbox row until it is final (confirmed or failed), at most maxReceiptPolls times. */
export async function waitFinal(
  deps: SwapDeps,
  record: Pick<OutboundRecord, 'id'>,
): Promise<OutboundRecord | undefined> {
  const polls = deps.maxReceiptPolls ?? MAX_RECEIPT_POLLS
  const sleep = deps.sleep ?? defaultSleep
  for (let i = 0; i < polls; i++) {
    const r = await confirmOutbound(deps.outbox, record.id)
    if (r.state === 'confirmed' || r.state === 'failed') return r
    await sleep(deps.receiptPollMs ?? RECEIPT_POLL_MS)
  }
  return undefined
}

/** An approval's gas, platform overhead (`gas_spent` slot 0, no user); keyed by its hash, so once. */
async function journalApprovalGas(sql: Sql, chain: ChainName, final: OutboundRecord, at: Date): Promise<void> {
  if (final.gasUsed === undefined) return
  await appendBatch(sql, [
    {
      type: 'gas_spent',
      payload: { chain, txHash: final.txHash, slot: 0, currency: GAS_CURRENCY, amount: feePaidWei(final) },
      occurredAt: at,
    },
  ])
}

/** The next step of an approval's outbox rows: a new one only once the last is final. */
async function approvalStep(sql: Sql, refId: string): Promise<number> {
  const [last] = await sql<{ step: number; state: string }[]>`
    select step, state from outbound_txs where purpose = 'swap_approval' and ref_id = ${refId}
    order by step desc limit 1`
  if (last === undefined) return 0
  return last.state === 'confirmed' || last.state === 'failed' ? last.step + 1 : last.step
}

/**
 * The allowances the swap still needs, each through the outbox (purpose `swap_approval`, ref
 * `{chain}:{spender}:{token}`; a new step only when the previous approval is final and the
 * allowance is short again). Its gas is platform overhead: `gas_spent` at slot 0, no user.
 * Returns false when an approval is not final yet.
 */
export async function ensureApprovals(
  deps: SwapDeps,
  chain: ChainName,
  approvals: readonly ApprovalCall[],
): Promise<boolean> {
  // An approval a dead worker broadcast may be mined by now, so the adapter no longer asks for it:
  // its row is settled here whatever `approvals` says, or its gas would never be journaled
  // (test/fault/swap-approval.test.ts). Reverted ones only get their gas: the allowance check asks again.
  const open = await deps.sql<{ id: string }[]>`
    select id from outbound_txs where purpose = 'swap_approval' and chain = ${chain}
      and from_address = ${getAddress(deps.swapWallet.address)} and state in ('signed', 'broadcast')`
  for (const row of open) {
    const final = await waitFinal(deps, row)
    if (!final) return false
    await journalApprovalGas(deps.sql, chain, final, deps.clock.now())
  }
  for (const a of approvals) {
    const refId = `${chain}:${a.spender.toLowerCase()}:${a.token.address.toLowerCase()}`
    const sent = await sendOnce(deps.outbox, {
      kind: 'call',
      chain,
      purpose: 'swap_approval',
      refId,
      step: await approvalStep(deps.sql, refId),
      signer: deps.swapWallet,
      to: a.to,
      data: a.data,
      valueWei: a.value,
      token: outboxToken(a.token.currency),
      amountBaseUnits: a.allowance,
    })
    const final = await waitFinal(deps, sent)
    if (!final) return false
    await journalApprovalGas(deps.sql, chain, final, deps.clock.now())
    // a reverted approval is not retried in this call (no loop of burnt gas): the caller's retry sends the next one
    if (final.state !== 'confirmed')
      throw new SwapApprovalFailedError({ chain, txHash: final.txHash, token: a.token.currency, spender: a.spender })
  }
  return true
}

/** The step's gas, charged to the user (`gas_spent` slot 1). */
function stepGas(req: SwapRequest, txHash: string, amount: bigint, occurredAt: Date): EventInput {
  return {
    type: 'gas_spent',
    payload: { chain: req.chain, txHash, slot: 1, currency: GAS_CURRENCY, amount, userId: req.userId },
    occurredAt,
  }
}

/** What the user is booked of `bought`: rounded down to a multiple of `step` (the rest is the platform's). */
export function creditedAmount(bought: bigint, step = 1n): bigint {
  if (step <= 0n) throw new RangeError('creditStep must be positive')
  return bought - (bought % step)
}

/** An executed step: what was sold and the user is credited of what was bought, and its gas. */
export function executedEvents(
  req: SwapRequest,
  final: OutboundRecord,
  outcome: { sellAmount: bigint; buyAmount: bigint },
  occurredAt: Date,
): EventInput[] {
  return [
    {
      type: 'swap_executed',
      payload: {
        userId: req.userId,
        subaccountId: req.subaccountId,
        chain: req.chain,
        txHash: final.txHash,
        sellCurrency: req.sell,
        sellAmount: outcome.sellAmount,
        buyCurrency: req.buy,
        buyAmount: creditedAmount(outcome.buyAmount, req.creditStep),
      },
      occurredAt,
    },
    stepGas(req, final.txHash, feePaidWei(final), occurredAt),
  ]
}

/** A step that reverted on chain: the revert and the gas it burnt. */
export function revertedEvents(
  req: SwapRequest,
  final: OutboundRecord,
  where: { step: number; epsilonBps: number },
  occurredAt: Date,
): EventInput[] {
  return [
    {
      type: 'swap_reverted',
      payload: {
        chain: req.chain,
        txHash: final.txHash,
        userId: req.userId,
        subaccountId: req.subaccountId,
        reason: `reverted on chain at ladder step ${where.step} (ε ${where.epsilonBps} bps)`,
      },
      occurredAt,
    },
    stepGas(req, final.txHash, feePaidWei(final), occurredAt),
  ]
}
