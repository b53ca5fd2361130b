/**
 * Confirmation of the outbox's transactions in a world where RPC answers may be late, wrong or
 * contradict each other (docs/hostile-world.md "Never pay twice" and "Stuck transactions").
 *
 * The rules, because a withdrawal's reserve is released when its transaction failed:
 * - Only a receipt at the chain's confirmation depth, whose block is still the block at that
 *   height when read again, makes a transaction final (confirmed, or failed when it reverted).
 * - "Never mined" is never concluded from one reading. When the sender's nonce is used at
 *   confirmed depth yet no signed version of ours has a receipt, the answers contradict each other
 *   (a load-balanced provider serving the nonce from one backend and the receipt from another, or
 *   a key used outside the outbox): the reading is counted, and after enough readings over enough
 *   time the row is `held` for an operator, with an alert. Nothing is released on such evidence.
 * - A transaction not mined within its bound, while its nonce is the sender's next one, is
 *   replaced: the same nonce, calldata, value and gas limit with higher fees, stored as a new
 *   version before it is broadcast. Whichever version is mined is found by its hash, and its gas
 *   is what the journal records.
 */
import { AppError } from '@wh/core'
import {
  type Address,
  type Hex,
  keccak256,
  type LocalAccount,
  parseTransaction,
  TransactionReceiptNotFoundError,
  type TransactionSerializableEIP1559,
} from 'viem'
import type { ChainName } from './chains'
import type { ChainClients } from './clients'
import { currentFees, gasCeiling, rpcOf } from './outbound-policy'
import type { OutboxDeps } from './outbox-deps'
import { bump, fillNonce, maxOf as max, OUTBOUND_MAX_VERSIONS_WITH_FILLS, onBroadcastRefused } from './outbox-fill'
import {
  clearContradictions,
  clearRefusals,
  findById,
  forgetMined,
  markBroadcast,
  NONCE_FILLED_ERROR,
  type OutboundRecord,
  type OutboundRow,
  type OutboundVersion,
  recordContradiction,
  recordMined,
  recordReplacement,
  toRecord,
  versionsOf,
} from './outbox-store'
import { TOKEN_MOVED_NOTHING, tokenUnitsSent } from './outbox-token'

/** A transaction not mined this long after its newest version was signed is replaced. */
export const OUTBOUND_REPLACE_AFTER_MS = 3 * 60_000
/** Versions per transaction at most (the first signature and its replacements). */
export const OUTBOUND_MAX_VERSIONS = 6
/** A replacement never offers more than this multiple of the first version's max fee per gas. */
export const OUTBOUND_FEE_CAP_MULTIPLE = 10n
/** Contradictory readings (nonce used at depth, no receipt) before a row is held… */
export const CONTRADICTION_HOLD_READINGS = 3
/** …and the time they must span: a lagging backend catches up well within it. */
export const CONTRADICTION_HOLD_AFTER_MS = 5 * 60_000

/** An outbound row id that does not exist. */
export class OutboundNotFoundError extends AppError {
  constructor(id: string) {
    super({ code: 'OUTBOUND_NOT_FOUND', statusCode: 404, message: 'no such outbound transaction', details: { id } })
  }
}

/** An operator resolved a row that is not held. */
export class OutboundNotHeldError extends AppError {
  constructor(id: string) {
    super({
      code: 'OUTBOUND_NOT_HELD',
      statusCode: 409,
      message: 'the outbound transaction is not held',
      details: { id },
    })
  }
}

function clientsOf(deps: OutboxDeps, chain: string): ChainClients {
  const c = deps.clients.get(chain as ChainName)
  if (!c) throw new AppError({ code: 'OUTBOX_CONFIG', message: 'no clients for chain', details: { chain } })
  return c
}

/** A node's answers that mean "this very transaction is already in the pool or mined". */
export function isAlreadyKnown(e: unknown): boolean {
  const seen = new Set<unknown>()
  let cur: unknown = e
  while (cur && typeof cur === 'object' && !seen.has(cur)) {
    seen.add(cur)
    const msg = `${(cur as { details?: string }).details ?? ''} ${(cur as { message?: string }).message ?? ''}`
    if (/already known|known transaction|already imported|nonce too low|nonce has already been used/i.test(msg))
      return true
    cur = (cur as { cause?: unknown }).cause
  }
  return false
}

/** Sends raw bytes; "already known" is success (the same bytes, or this nonce's, are out there). */
export async function broadcastRaw(c: ChainClients, raw: Hex): Promise<void> {
  try {
    await c.publicClient.request({ method: 'eth_sendRawTransaction', params: [raw] })
  } catch (e) {
    if (!isAlreadyKnown(e)) throw e
  }
}

export async function receiptOf(c: ChainClients, hash: Hex) {
  try {
    return await c.publicClient.getTransactionReceipt({ hash })
  } catch (e) {
    if (e instanceof TransactionReceiptNotFoundError) return undefined
    throw e
  }
}

export type Receipt = NonNullable<Awaited<ReturnType<typeof receiptOf>>>

/** The one version with a receipt (versions share a nonce: at most one can be mined). */
export async function minedVersion(
  c: ChainClients,
  versions: readonly OutboundVersion[],
): Promise<{ version: OutboundVersion; receipt: Receipt } | undefined> {
  const receipts = await Promise.all(versions.map((v) => receiptOf(c, v.tx_hash)))
  const at = receipts.findIndex((r) => r !== undefined)
  const version = versions[at]
  const receipt = receipts[at]
  return version && receipt ? { version, receipt } : undefined
}

/** eth_blockNumber straight from the node: viem's getBlockNumber caches for seconds. */
export async function headOf(c: ChainClients): Promise<bigint> {
  return BigInt(await c.publicClient.request({ method: 'eth_blockNumber' }))
}

/** The hash of the block at `n` as the node answers now, or undefined when it has none. */
export async function blockHashAt(c: ChainClients, n: bigint): Promise<Hex | undefined> {
  const block = await c.publicClient.request({ method: 'eth_getBlockByNumber', params: [`0x${n.toString(16)}`, false] })
  return (block as { hash?: Hex } | null)?.hash ?? undefined
}

/**
 * Reads the chain for row `id` and moves it as far as the evidence allows; returns the row.
 * A row not mined yet is re-broadcast, and replaced with higher fees once it is stuck (when the
 * deps can sign for its sender). Never concludes "failed" except from a reverted receipt at depth.
 *
 * @example
 *   const rec = await confirmOutbound(deps, record.id)
 *   if (rec.state === 'held') // an operator decides; nothing is released meanwhile
 */
export async function confirmOutbound(deps: OutboxDeps, id: string): Promise<OutboundRecord> {
  const row = await findById(deps.sql, id)
  if (!row) throw new OutboundNotFoundError(id)
  if (row.state !== 'signed' && row.state !== 'broadcast') return toRecord(row)
  const c = clientsOf(deps, row.chain)
  const confirmations = BigInt((deps.registry.get(row.chain as ChainName) ?? c.info).confirmations)
  const versions = await versionsOf(deps.sql, id)

  const mined = await minedVersion(c, versions)
  if (mined) return settleMined(deps, c, row, mined, confirmations)

  if (row.block_number !== null) {
    // it was mined once and is gone again (a reorg): forget the stale receipt
    await forgetMined(deps.sql, id)
    row.block_number = row.gas_used = row.effective_gas_price = null
  }
  const from = row.from_address as Address
  const nonce = Number(row.nonce)
  const latestNonce = await c.publicClient.getTransactionCount({ address: from, blockTag: 'latest' })
  if (latestNonce > nonce) return weighNonceUsed(deps, c, row, versions, confirmations)

  await clearContradictions(deps.sql, id)
  const newest = versions.at(-1)
  const replaced =
    newest && latestNonce === nonce && newest.age_ms >= (deps.replaceAfterMs ?? OUTBOUND_REPLACE_AFTER_MS)
      ? await replaceStuck(deps, c, row, versions)
      : false
  // best effort: a node may refuse the bytes for now (priced under a spiked base fee); the
  // replacement above is what gets a stuck transaction out, not a refused re-broadcast. Refused
  // for good (the block's gas limit fell under the row's, say), the nonce is filled (outbox-fill.ts)
  if (!replaced) await rebroadcast(deps, c, row)
  if (row.state === 'signed') await markBroadcast(deps.sql, id)
  return toRecord((await findById(deps.sql, id)) as OutboundRow)
}

/** The row's newest bytes again; a refusal goes to the policy (outbox-fill.ts), never up to the caller. */
async function rebroadcast(deps: OutboxDeps, c: ChainClients, row: OutboundRow): Promise<void> {
  try {
    await broadcastRaw(c, row.raw_tx as Hex)
    if (row.refusals > 0) await clearRefusals(deps.sql, row.id)
  } catch (e) {
    const signer = await deps.signerOf?.(row.from_address as Address)
    await onBroadcastRefused(deps, c, row, signer, e).catch(() => undefined)
  }
}

/** A version has a receipt: final once deep enough and its block is still the one at that height. */
async function settleMined(
  deps: OutboxDeps,
  c: ChainClients,
  row: OutboundRow,
  mined: { version: OutboundVersion; receipt: Receipt },
  confirmations: bigint,
): Promise<OutboundRecord> {
  const { receipt, version } = mined
  const head = await headOf(c)
  let final = head >= receipt.blockNumber + confirmations
  // re-check the receipt against the chain at that height: a backend on a stale fork can serve a
  // receipt whose block the canonical chain no longer has
  if (final) final = (await blockHashAt(c, receipt.blockNumber)) === receipt.blockHash
  // a mined fill took the nonce: nothing of the row's own transaction ever ran, so it failed; a
  // token transfer that logged nothing moved nothing (a token answering false), so it failed too
  const movedNothing =
    receipt.status === 'success' &&
    !version.fills_nonce &&
    tokenUnitsSent(version.raw_tx, row.from_address, receipt.logs) === 0n
  const succeeded = receipt.status === 'success' && !version.fills_nonce && !movedNothing
  const state = final ? (succeeded ? 'confirmed' : 'failed') : 'broadcast'
  const error = version.fills_nonce
    ? `${NONCE_FILLED_ERROR} (${row.error ?? 'refused'})`.slice(0, 500)
    : movedNothing
      ? TOKEN_MOVED_NOTHING
      : 'reverted'
  const updated = await recordMined(deps.sql, row.id, {
    state,
    rawTx: version.raw_tx,
    txHash: version.tx_hash,
    gasUsed: receipt.gasUsed,
    effectiveGasPrice: receipt.effectiveGasPrice,
    blockNumber: receipt.blockNumber,
    error: state === 'failed' ? error : version.fills_nonce ? row.error : null,
  })
  return toRecord(updated)
}

/**
 * The sender's nonce moved past ours and no version of ours has a receipt. Recent: a backend may
 * serve the nonce before the receipt, so wait. At confirmed depth: read the receipts once more; if
 * they are still missing, count a contradiction, and hold the row once they persist.
 */
async function weighNonceUsed(
  deps: OutboxDeps,
  c: ChainClients,
  row: OutboundRow,
  versions: readonly OutboundVersion[],
  confirmations: bigint,
): Promise<OutboundRecord> {
  const head = await headOf(c)
  const depth = head - confirmations
  let usedAtDepth = false
  try {
    const atDepth = await c.publicClient.getTransactionCount({
      address: row.from_address as Address,
      blockNumber: depth < 0n ? 0n : depth,
    })
    usedAtDepth = atDepth > Number(row.nonce)
  } catch {
    // a node that cannot serve state at that depth gives no evidence either way: keep waiting
  }
  if (!usedAtDepth) return toRecord(row)
  const again = await minedVersion(c, versions)
  if (again) return settleMined(deps, c, row, again, confirmations)
  const { row: after, heldNow } = await recordContradiction(deps.sql, row.id, {
    holdAfterReadings: deps.contradictionHold?.readings ?? CONTRADICTION_HOLD_READINGS,
    holdAfterMs: deps.contradictionHold?.afterMs ?? CONTRADICTION_HOLD_AFTER_MS,
    reason: `nonce ${row.nonce} is used at confirmed depth but none of ${versions.length} signed version(s) has a receipt`,
  })
  if (heldNow) {
    await deps.alerter?.alert('outbound transaction held: the chain contradicts itself; an operator decides', {
      outboundId: row.id,
      chain: row.chain,
      purpose: row.purpose,
      refId: row.ref_id,
      nonce: String(row.nonce),
      txHashes: versions.map((v) => v.tx_hash).join(' '),
    })
  }
  return toRecord(after)
}

/**
 * Signs and stores the next version of a stuck transaction, then broadcasts it. Returns false
 * (nothing sent) when no signer is known for the sender, the version or fee bound is reached, or a
 * concurrent caller stored a version first. A version whose gas limit the chain can no longer mine
 * (above the latest block's or the per-transaction cap) is not bumped: a bump keeps the gas limit,
 * so it would be as unminable; its nonce is filled instead (outbox-fill.ts).
 */
async function replaceStuck(
  deps: OutboxDeps,
  c: ChainClients,
  row: OutboundRow,
  versions: readonly OutboundVersion[],
): Promise<boolean> {
  const signer = await deps.signerOf?.(row.from_address as Address)
  if (!signer) return false
  const newest = versions.at(-1) as OutboundVersion
  const first = parseTransaction((versions[0] as OutboundVersion).raw_tx) as TransactionSerializableEIP1559
  const current = parseTransaction(row.raw_tx as Hex) as TransactionSerializableEIP1559
  if (current.maxFeePerGas === undefined || current.maxPriorityFeePerGas === undefined) return false
  const ceiling = await gasCeiling(rpcOf(c.publicClient))
  if ((current.gas ?? 0n) > ceiling)
    return fillNonce(deps, c, row, signer, `gas limit ${current.gas} above the chain's ${ceiling}`)
  // a stuck fill is bumped within the fills' bound, and without the fee cap: it burns 21,000 gas at most
  const bound = newest.fills_nonce ? OUTBOUND_MAX_VERSIONS_WITH_FILLS : OUTBOUND_MAX_VERSIONS
  if (versions.length >= bound) return false
  const fees = await currentFees(rpcOf(c.publicClient))
  const priority = max(fees.maxPriorityFeePerGas, bump(current.maxPriorityFeePerGas))
  const maxFee = max(fees.maxFeePerGas, bump(current.maxFeePerGas), priority)
  if (!newest.fills_nonce && maxFee > (first.maxFeePerGas ?? 0n) * OUTBOUND_FEE_CAP_MULTIPLE) return false
  const raw = await signReplacement(signer, current, maxFee, priority)
  const stored = await recordReplacement(deps.sql, row.id, {
    version: newest.version + 1,
    rawTx: raw,
    txHash: keccak256(raw),
    previousHash: row.tx_hash as Hex,
    // a stuck fill's replacement is a fill too
    fillsNonce: newest.fills_nonce,
  })
  if (!stored) return false
  row.raw_tx = raw
  row.tx_hash = keccak256(raw)
  await rebroadcast(deps, c, row)
  return true
}

function signReplacement(
  signer: LocalAccount,
  tx: TransactionSerializableEIP1559,
  maxFeePerGas: bigint,
  maxPriorityFeePerGas: bigint,
): Promise<Hex> {
  return signer.signTransaction({
    type: 'eip1559',
    chainId: tx.chainId as number,
    nonce: tx.nonce as number,
    ...(tx.to ? { to: tx.to } : {}),
    value: tx.value ?? 0n,
    ...(tx.data ? { data: tx.data } : {}),
    gas: tx.gas as bigint,
    maxFeePerGas,
    maxPriorityFeePerGas,
  })
}
