/**
 * spec 6.1: the idempotency key of every event, built here and nowhere else. The key is what makes
 * a replayed chain log, a retried job or a re-read fill a no-op (spec 6 rule 3), so two facts must
 * never share one and one fact must always get the same one.
 */
import { createHash } from 'node:crypto'
import { AppError } from '@wh/core'

export class InvalidKeyPartError extends AppError {
  constructor(message: string, details: Record<string, unknown>) {
    super({ code: 'INVALID_LEDGER_KEY', statusCode: 500, message, details })
  }
}

const TX_HASH = /^0x[0-9a-fA-F]{64}$/
const CHAIN = /^[a-z][a-z0-9-]{0,31}$/

function nonEmpty(value: string, what: string): string {
  if (value.length === 0 || value.length > 200 || /\s/.test(value))
    throw new InvalidKeyPartError(`invalid ${what} in an idempotency key`, { [what]: value })
  return value
}
function seconds(value: number, what: string, multipleOf = 1): number {
  if (!Number.isSafeInteger(value) || value < 0 || value % multipleOf !== 0)
    throw new InvalidKeyPartError(`invalid ${what} in an idempotency key`, { [what]: value })
  return value
}
function txPart(chain: string, txHash: string): string {
  if (!CHAIN.test(chain)) throw new InvalidKeyPartError('invalid chain in an idempotency key', { chain })
  if (!TX_HASH.test(txHash)) throw new InvalidKeyPartError('invalid tx hash in an idempotency key', { txHash })
  // one transaction, one key, whatever case the RPC node or the explorer used
  return `tx:${chain}:${txHash.toLowerCase()}`
}

/** Exchange trade: the fill's `<tradeId>`, one event per fill. */
export function tradeKey(tradeId: string): string {
  return nonEmpty(tradeId, 'tradeId')
}

/** On-chain event seen in a log: `tx:{chain}:{txHash}:{logIndex}`. */
export function chainEventKey(p: { chain: string; txHash: string; logIndex: number }): string {
  return `${txPart(p.chain, p.txHash)}:${seconds(p.logIndex, 'logIndex')}`
}

/**
 * A transaction the service sent itself has no log of its own to index: slot 0 is its first event,
 * slot 1 the second about the same transaction (e.g. `withdrawal_sent` then its `gas_spent`).
 * spec 6.1: reusing slot 0 would make the second event deduplicate silently and lose the money,
 * hence the literal type.
 */
export function ownTxKey(p: { chain: string; txHash: string; slot: 0 | 1 }): string {
  if (p.slot !== 0 && p.slot !== 1) throw new InvalidKeyPartError('slot must be 0 or 1', { slot: p.slot })
  return `${txPart(p.chain, p.txHash)}:${p.slot}`
}

export type AccrualType = 'interest' | 'funding'
/** Accrual: `accrual:{sub}:{type}:{bucketTs}` (bucketTs in epoch seconds). */
export function accrualKey(p: { subaccountId: string; type: AccrualType; bucketTs: number }): string {
  return `accrual:${nonEmpty(p.subaccountId, 'subaccountId')}:${p.type}:${seconds(p.bucketTs, 'bucketTs')}`
}

/** Option settlement: `{sub}:{instrument}:{expirySec}`. */
export function settlementKey(p: { subaccountId: string; instrument: string; expirySec: number }): string {
  return `${nonEmpty(p.subaccountId, 'subaccountId')}:${nonEmpty(p.instrument, 'instrument')}:${seconds(p.expirySec, 'expirySec')}`
}

/** Funding a subaccount: `subaccount_funded:{transactionId}`. */
export function subaccountFundedKey(transactionId: string): string {
  return `subaccount_funded:${nonEmpty(transactionId, 'transactionId')}`
}

/** A release: `release:{rowId}`. */
export function releaseKey(rowId: string): string {
  return `release:${nonEmpty(rowId, 'rowId')}`
}

/** Epoch seconds of the minute `at` falls in: the bucket of the stop keys. */
export function minuteBucket(at: Date): number {
  return Math.floor(at.getTime() / 60_000) * 60
}

/** Stopping a subaccount: `stop:{sub}:{minute bucket}`; one stop per subaccount per minute. */
export function stopKey(p: { subaccountId: string; minuteBucket: number }): string {
  return `stop:${nonEmpty(p.subaccountId, 'subaccountId')}:${seconds(p.minuteBucket, 'minuteBucket', 60)}`
}

/**
 * Reconciliation adjustment: `reconcile:{sub}:{account}:{bucket}:{delta}`. spec 6.1: the delta is
 * mandatory, so a second, different divergence found in the same bucket is recorded too instead
 * of deduplicating against the first.
 */
export function reconcileAdjustmentKey(p: {
  subaccountId: string
  account: string
  bucket: number
  delta: bigint
}): string {
  if (p.delta === 0n) throw new InvalidKeyPartError('a reconciliation adjustment needs a non-zero delta', {})
  return `reconcile:${nonEmpty(p.subaccountId, 'subaccountId')}:${nonEmpty(p.account, 'account')}:${seconds(p.bucket, 'bucket')}:${p.delta}`
}

export interface Divergence {
  readonly account: string
  readonly delta: bigint
}

/**
 * spec 6.1: the run signature covers the account and delta of every divergence found, in any
 * order: identical contents give one key, different contents (even within one minute) another.
 */
export function runSignature(divergences: readonly Divergence[]): string {
  if (divergences.length === 0) throw new InvalidKeyPartError('a run signature needs at least one divergence', {})
  const lines = divergences.map((d) => `${nonEmpty(d.account, 'account')}=${d.delta}`).sort()
  return createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 32)
}

/** Stop raised by reconciliation: `reconcile:{sub}:stop:{bucket}:{run signature}`. */
export function reconcileStopKey(p: {
  subaccountId: string
  bucket: number
  divergences: readonly Divergence[]
}): string {
  return `reconcile:${nonEmpty(p.subaccountId, 'subaccountId')}:stop:${seconds(p.bucket, 'bucket')}:${runSignature(p.divergences)}`
}

// Keys the spec leaves open (written down in docs/ledger.md). Each has its own prefix, so none
// can collide with a key of 6.1.

/** An order the exchange refused: `trade_rejected:{orderId}` (not a fill, so not a tradeId). */
export function tradeRejectedKey(orderId: string): string {
  return `trade_rejected:${nonEmpty(orderId, 'orderId')}`
}
/** An outside signal: `signal:{signalId}` (the sender's id, so a redelivered webhook is a no-op). */
export function signalKey(signalId: string): string {
  return `signal:${nonEmpty(signalId, 'signalId')}`
}
/** A stop cleared: `stop_cleared:{sub}:{minute bucket}`. */
export function stopClearedKey(p: { subaccountId: string; minuteBucket: number }): string {
  return `stop_cleared:${nonEmpty(p.subaccountId, 'subaccountId')}:${seconds(p.minuteBucket, 'minuteBucket', 60)}`
}

/**
 * What names a capital movement once (docs/ledger.md "Platform capital"): the transaction that moved
 * it (the id of its chain and its hash), or the company treasury's own reference for it.
 */
export type CapitalReference = { readonly chainId: number; readonly txHash: string } | { readonly treasury: string }

const TREASURY_REF = /^[a-z0-9][a-z0-9._:-]{0,100}$/

/**
 * A capital movement's reference in its one spelling, the event's key: `tx:{chain id}:{hash}` (the
 * hash in lower case) or `treasury:{reference}` (in lower case). One movement written two ways (the
 * hash as an explorer shows it, the treasury's reference in capitals) is one key, so it is booked once.
 *
 * @example
 *   capitalReference({ chainId: 1, txHash: '0xAB…' }) // 'tx:1:0xab…'
 */
export function capitalReference(r: CapitalReference): string {
  if ('treasury' in r) {
    const ref = r.treasury.trim().toLowerCase()
    if (!TREASURY_REF.test(ref)) throw new InvalidKeyPartError('invalid treasury reference', { treasury: r.treasury })
    return `treasury:${ref}`
  }
  if (!Number.isSafeInteger(r.chainId) || r.chainId <= 0)
    throw new InvalidKeyPartError('invalid chain id in a capital reference', { chainId: r.chainId })
  if (!TX_HASH.test(r.txHash))
    throw new InvalidKeyPartError('invalid tx hash in an idempotency key', { txHash: r.txHash })
  return `tx:${r.chainId}:${r.txHash.toLowerCase()}`
}

/**
 * A reference as an operator types it (`tx:{chain id}:{hash}` or `treasury:{reference}`, any case),
 * or undefined when it is neither.
 */
export function parseCapitalReference(text: string): CapitalReference | undefined {
  const t = text.trim()
  const tx = /^tx:([1-9][0-9]{0,15}):(0x[0-9a-fA-F]{64})$/i.exec(t)
  if (tx) return { chainId: Number(tx[1]), txHash: tx[2] as string }
  const treasury = /^treasury:(.+)$/i.exec(t)
  if (treasury && TREASURY_REF.test((treasury[1] as string).toLowerCase())) return { treasury: treasury[1] as string }
  return undefined
}

/**
 * The platform's capital moved: `capital_contributed:{reference}` or `capital_withdrawn:{reference}`
 * (not in 6.1), the reference in its one spelling (capitalReference); any other is refused, so no
 * movement gets a second key.
 */
export function capitalKey(direction: 'contributed' | 'withdrawn', reference: string): string {
  const parsed = parseCapitalReference(reference)
  if (!parsed || capitalReference(parsed) !== reference)
    throw new InvalidKeyPartError(
      'a capital reference is tx:{chain id}:{hash} or treasury:{reference}, in lower case',
      {
        reference,
      },
    )
  return `capital_${direction}:${reference}`
}
