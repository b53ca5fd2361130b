/**
 * An operator's verdict on a held transaction (docs/hostile-world.md "Never pay twice"): what the
 * chain says now, read again before money is released (readHeldEvidence), and the verdict on that
 * evidence, in the caller's transaction (resolveHeldOutbound; @wh/ops commits it with its record and
 * the release of the business row that waits on it).
 */
import { AppError } from '@wh/core'
import type { Queryable, Sql } from '@wh/db'
import type { Address, Hex } from 'viem'
import type { ChainClients } from './clients'
import {
  blockHashAt,
  headOf,
  minedVersion,
  OutboundNotFoundError,
  OutboundNotHeldError,
  type Receipt,
  receiptOf,
} from './outbox-confirm'
import {
  findById,
  type OutboundRecord,
  type OutboundVersion,
  resolveHeldRow,
  toRecord,
  versionsOf,
} from './outbox-store'

/** A held transaction the chain shows mined: it cannot be failed (recheck it, or mark it sent). */
export class OutboundMinedError extends AppError {
  constructor(id: string, txHash: string) {
    super({
      code: 'OUTBOUND_MINED',
      statusCode: 409,
      message: 'a signed version of this transaction has a receipt: it was mined, it cannot be failed',
      details: { id, txHash },
    })
  }
}

/** A held transaction whose nonce the chain has not used at confirmed depth: it may still be mined. */
export class OutboundMayStillMineError extends AppError {
  constructor(id: string, nonce: number, atDepth: number, block: bigint) {
    super({
      code: 'OUTBOUND_MAY_STILL_MINE',
      statusCode: 409,
      message: "the sender's nonce is not used at confirmed depth: this transaction could still be mined",
      details: { id, nonce, nonceAtDepth: atDepth, block: block.toString() },
    })
  }
}

/** The chain shows the nonce used but not by which transaction: nothing proves this one can never be mined. */
export class OutboundNonceTakerUnknownError extends AppError {
  constructor(id: string, nonce: number) {
    super({
      code: 'OUTBOUND_NONCE_TAKER_UNKNOWN',
      statusCode: 409,
      message:
        'the chain does not show which transaction took the nonce: nothing proves this one failed (recheck it, or read another provider)',
      details: { id, nonce },
    })
  }
}

/** Marked sent on a hash that is no version of the transaction, or whose receipt is not final. */
export class OutboundReceiptNotFinalError extends AppError {
  constructor(id: string, txHash: string, why: string) {
    super({ code: 'OUTBOUND_RECEIPT_NOT_FINAL', statusCode: 409, message: why, details: { id, txHash } })
  }
}

/**
 * What the chain says now about held transaction `id`, read before an operator's verdict takes
 * effect (docs/hostile-world.md "Never pay twice"): an operator misled by the provider that caused
 * the hold must not release money on its word.
 * - `failed`: the sender's nonce is used at confirmed depth (else it may still be mined:
 *   OutboundMayStillMineError); no signed version has a receipt (else it was mined:
 *   OutboundMinedError); and the transaction that took the nonce is found in its block (the block
 *   where the sender's count passes the nonce, found by bisection) and is none of ours (else mined:
 *   the provider that hid our receipts still serves blocks), else nothing proves it
 *   (OutboundNonceTakerUnknownError). Read in that order: a version mined after the nonce reading
 *   shows its receipt.
 * - `mined`: `txHash` is one of its signed versions and its receipt is at confirmed depth in a block
 *   the chain still has at that height; the receipt is returned for the journal (its gas).
 * - `recheck` reads nothing: the next confirmation reads the chain afresh.
 */
export async function readHeldEvidence(
  deps: { sql: Sql; client: ChainClients },
  id: string,
  verdict: HeldVerdict,
  txHash?: Hex,
): Promise<HeldEvidence> {
  if (verdict === 'recheck') return { verdict }
  const row = await findById(deps.sql, id)
  if (!row) throw new OutboundNotFoundError(id)
  if (row.state !== 'held') throw new OutboundNotHeldError(id)
  const c = deps.client
  const versions = await versionsOf(deps.sql, id)
  const confirmations = BigInt(c.info.confirmations)
  if (verdict === 'mined') {
    const version = versions.find((v) => v.tx_hash.toLowerCase() === txHash?.toLowerCase())
    if (!version)
      throw new OutboundReceiptNotFinalError(id, txHash ?? '', 'the hash is no signed version of this transaction')
    const receipt = await receiptOf(c, version.tx_hash)
    if (!receipt) throw new OutboundReceiptNotFinalError(id, version.tx_hash, 'the chain has no receipt for it')
    const final =
      (await headOf(c)) >= receipt.blockNumber + confirmations &&
      (await blockHashAt(c, receipt.blockNumber)) === receipt.blockHash
    if (!final) throw new OutboundReceiptNotFinalError(id, version.tx_hash, 'its receipt is not at confirmed depth')
    return { verdict, version, receipt }
  }
  const depth = (await headOf(c)) - confirmations
  const block = depth < 0n ? 0n : depth
  const sender = row.from_address as Address
  const nonce = Number(row.nonce)
  const atDepth = await c.publicClient.getTransactionCount({ address: sender, blockNumber: block })
  if (atDepth <= nonce) throw new OutboundMayStillMineError(id, nonce, atDepth, block)
  const mined = await minedVersion(c, versions)
  if (mined) throw new OutboundMinedError(id, mined.version.tx_hash)
  const taker = await nonceTaker(c, sender, nonce, block)
  if (!taker) throw new OutboundNonceTakerUnknownError(id, nonce)
  const ours = versions.find((v) => v.tx_hash.toLowerCase() === taker.hash.toLowerCase())
  if (ours) throw new OutboundMinedError(id, ours.tx_hash)
  return { verdict, nonceAtDepth: atDepth, block, versions: versions.length, takenBy: taker }
}

/**
 * The transaction of `sender` with `nonce`, mined at or below `atOrBelow` (where the count is known
 * to be past it): the lowest block whose count passes the nonce, by bisection over the sender's
 * count at each block, then that block's transactions. Undefined when the block does not show it.
 */
async function nonceTaker(
  c: ChainClients,
  sender: Address,
  nonce: number,
  atOrBelow: bigint,
): Promise<{ hash: Hex; blockNumber: bigint } | undefined> {
  const countAt = (blockNumber: bigint) => c.publicClient.getTransactionCount({ address: sender, blockNumber })
  let lo = 0n
  let hi = atOrBelow
  if ((await countAt(lo)) > nonce) hi = lo
  while (hi - lo > 1n) {
    const mid = lo + (hi - lo) / 2n
    if ((await countAt(mid)) > nonce) hi = mid
    else lo = mid
  }
  const b = await c.publicClient.getBlock({ blockNumber: hi, includeTransactions: true })
  const tx = b.transactions.find((t) => t.from.toLowerCase() === sender.toLowerCase() && t.nonce === nonce)
  return tx ? { hash: tx.hash, blockNumber: hi } : undefined
}

export type HeldVerdict = 'recheck' | 'failed' | 'mined'
export type HeldEvidence =
  | { readonly verdict: 'recheck' }
  | {
      readonly verdict: 'failed'
      readonly nonceAtDepth: number
      readonly block: bigint
      readonly versions: number
      /** the transaction that took the nonce: the proof this one can never be mined */
      readonly takenBy: { readonly hash: Hex; readonly blockNumber: bigint }
    }
  | { readonly verdict: 'mined'; readonly version: OutboundVersion; readonly receipt: Receipt }

/**
 * An operator's decision on a held transaction (docs/hostile-world.md), in the caller's transaction
 * (with its record and the release of the row that waits on it: @wh/ops resolveHeld), on the
 * evidence readHeldEvidence read: `recheck` reads the chain afresh on the next confirmation (the
 * provider was at fault), `failed` ends it as never mined (another transaction took its nonce),
 * `mined` settles it on its verified receipt (confirmed, or failed when it reverted). Returns the
 * row, or undefined when it is not held (any more).
 */
export async function resolveHeldOutbound(
  tx: Queryable,
  id: string,
  evidence: HeldEvidence,
  note: string,
): Promise<OutboundRecord | undefined> {
  const mined =
    evidence.verdict === 'mined'
      ? {
          state: evidence.receipt.status === 'success' ? ('confirmed' as const) : ('failed' as const),
          rawTx: evidence.version.raw_tx,
          txHash: evidence.version.tx_hash,
          gasUsed: evidence.receipt.gasUsed,
          effectiveGasPrice: evidence.receipt.effectiveGasPrice,
          blockNumber: evidence.receipt.blockNumber,
        }
      : undefined
  const row = await resolveHeldRow(tx, id, evidence.verdict, note, mined)
  return row ? toRecord(row) : undefined
}
