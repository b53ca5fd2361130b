/**
 * The two legs of a deposit into a contract that pulls an ERC-20 (Derive v3's L1
 * OnchainActionManager; CCTP's TokenMessengerV2, whose burn pulls the USDC): an `approve` of the
 * contract when the allowance is short (step 0), then the contract call (step 1), both through the
 * crash-safe outbox under one transfer's purpose and refId. The call once signed is the answer for good; before it, an approve
 * signed for the transfer is always finished first (left unbroadcast, its nonce would hold back
 * every later transaction of the hot wallet), and the call is signed only once the allowance is
 * mined (its gas estimate needs it).
 */
import { type Address, encodeFunctionData, erc20Abi, getAddress, type Hex } from 'viem'
import { confirmOutbound, findOutbound, type OutboundRecord, type OutboxDeps, sendOnce } from '../outbox'

/** The outbox purposes two-legged transfers use: the exchange deposit's, the CCTP burn's. */
export type TwoLegPurpose = 'bridge' | 'cctp_burn'

import type { BridgeTransfer } from './types'

/** Outbox steps of one transfer (purpose 'bridge', refId the transfer id). */
export const APPROVE_STEP = 0
export const DEPOSIT_STEP = 1

export type Leg =
  | { readonly leg: 'approve'; readonly record: OutboundRecord }
  | { readonly leg: 'deposit'; readonly record: OutboundRecord; readonly valueWei: bigint }

export interface DepositCall {
  readonly to: Address
  readonly data: Hex
  readonly valueWei: bigint
}

export interface TwoLegs {
  readonly outbox: OutboxDeps
  /** the legs' outbox purpose (default 'bridge') */
  readonly purpose?: TwoLegPurpose
  /** the ERC-20 the contract pulls */
  readonly token: Address
  /** the contract approved and called */
  readonly spender: Address
  /** an approve covers at least this much, so most transfers reuse one allowance */
  readonly approveAtLeast: bigint
  /** the checks before funds move, and the call to sign: run only when the call is signed */
  readonly prepare: () => Promise<DepositCall>
}

/** The calldata of the ERC-20 approve of `spender`. */
export function encodeApprove(spender: Address, amountBaseUnits: bigint): Hex {
  return encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [getAddress(spender), amountBaseUnits] })
}

function callOf(t: BridgeTransfer, step: number, c: DepositCall, purpose: TwoLegPurpose) {
  return {
    kind: 'call',
    chain: t.fromChain,
    purpose,
    refId: t.transferId,
    step,
    signer: t.signer,
    to: c.to,
    data: c.data,
    valueWei: c.valueWei,
    // both legs carry the transfer's amount in the row (the approve's own amount is in its calldata)
    token: t.token,
    amountBaseUnits: t.amountBaseUnits,
  } as const
}

async function allowance(legs: TwoLegs, t: BridgeTransfer): Promise<bigint> {
  const c = legs.outbox.clients.get(t.fromChain)
  if (!c) throw new Error(`no clients for ${t.fromChain}`)
  return c.publicClient.readContract({
    address: legs.token,
    abi: erc20Abi,
    functionName: 'allowance',
    args: [getAddress(t.signer.address), legs.spender],
  })
}

/** The transfer's current leg, signing the next one when it may (the rules above). */
export async function advanceLegs(legs: TwoLegs, t: BridgeTransfer): Promise<Leg> {
  const o = legs.outbox
  const purpose = legs.purpose ?? 'bridge'
  const ref = { purpose, refId: t.transferId } as const
  const deposit = await findOutbound(o, { ...ref, step: DEPOSIT_STEP })
  if (deposit) {
    // re-sent as it was signed (the outbox re-broadcasts it if the chain lacks it)
    const record = await sendOnce(o, callOf(t, DEPOSIT_STEP, { ...deposit, data: deposit.data ?? '0x' }, purpose))
    return { leg: 'deposit', record, valueWei: deposit.valueWei }
  }
  const storedApprove = await findOutbound(o, { ...ref, step: APPROVE_STEP })
  let approve = storedApprove
    ? await confirmOutbound(
        o,
        (await sendOnce(o, callOf(t, APPROVE_STEP, { ...storedApprove, data: storedApprove.data ?? '0x' }, purpose)))
          .id,
      )
    : undefined
  if ((await allowance(legs, t)) < t.amountBaseUnits) {
    if (!approve) {
      // biome-ignore lint/complexity/useMathMinMax: bigints (Math.max takes numbers)
      const amount = t.amountBaseUnits > legs.approveAtLeast ? t.amountBaseUnits : legs.approveAtLeast
      const data = encodeApprove(legs.spender, amount)
      const sent = await sendOnce(o, callOf(t, APPROVE_STEP, { to: legs.token, data, valueWei: 0n }, purpose))
      approve = await confirmOutbound(o, sent.id)
    }
    if (approve.state === 'failed' || (await allowance(legs, t)) < t.amountBaseUnits) {
      return { leg: 'approve', record: approve }
    }
  }
  const call = await legs.prepare()
  const record = await sendOnce(o, callOf(t, DEPOSIT_STEP, call, purpose))
  // a concurrent caller may have signed first: the stored value is the one paid
  const stored = await findOutbound(o, { ...ref, step: DEPOSIT_STEP })
  return { leg: 'deposit', record, valueWei: stored?.valueWei ?? call.valueWei }
}

/** The transfer's approve, if one was mined (its gas is the platform's). */
export async function minedApprove(
  outbox: OutboxDeps,
  t: BridgeTransfer,
  purpose: TwoLegPurpose = 'bridge',
): Promise<OutboundRecord[]> {
  const stored = await findOutbound(outbox, { purpose, refId: t.transferId, step: APPROVE_STEP })
  if (!stored) return []
  const r = await confirmOutbound(outbox, stored.record.id)
  return r.gasUsed !== undefined && (r.state === 'confirmed' || r.state === 'failed') ? [r] : []
}

export type LegsStatus =
  | { readonly state: 'pending'; readonly record: OutboundRecord }
  | {
      readonly state: 'failed'
      readonly record: OutboundRecord
      readonly reason: string
      readonly earlierLegs?: readonly OutboundRecord[]
    }
  | {
      readonly state: 'final'
      readonly record: OutboundRecord
      readonly valueWei: bigint
      readonly earlierLegs: readonly OutboundRecord[]
    }

/**
 * Where a two-legged transfer stands: pending while a leg is not final, failed with the mined
 * approve as an earlier leg, or the deposit's final record (`delivered` is the caller's to shape).
 */
export async function legsStatus(
  legs: TwoLegs,
  t: BridgeTransfer,
  failed: { readonly approve: string; readonly call: string },
): Promise<LegsStatus> {
  const current = await advanceLegs(legs, t)
  const r = await confirmOutbound(legs.outbox, current.record.id)
  if (current.leg === 'approve') {
    if (r.state === 'failed') return { state: 'failed', record: r, reason: failed.approve }
    return { state: 'pending', record: r }
  }
  if (r.state !== 'confirmed' && r.state !== 'failed') return { state: 'pending', record: r }
  const earlierLegs = await minedApprove(legs.outbox, t, legs.purpose)
  if (r.state === 'failed') return { state: 'failed', record: r, reason: failed.call, earlierLegs }
  return { state: 'final', record: r, valueWei: current.valueWei, earlierLegs }
}
