/**
 * Contract calls through the crash-safe outbox (docs/chains.md "The outbox"), for the swap and its
 * approvals.
 *
 * Why this file exists: `sendOnce` of @wh/wallet only sends a native or ERC-20 `transfer` (it
 * builds the calldata itself), and a swap is a call to the pool. Until the wallet's outbox takes a
 * contract call, this mirrors its `signAndRecord` exactly, on the same table and under the same
 * lock:
 * - the row goes into `outbound_txs` (unique (purpose, ref_id, step)) with the nonce, the raw
 *   signed bytes and their hash, committed BEFORE the first broadcast; a retry finds the row and
 *   re-broadcasts those very bytes, never a second transaction;
 * - the nonce is allocated under the same advisory lock key, `outbox:{chain}:{from}`, as the
 *   larger of the outbox's max(nonce) + 1 and the node's pending nonce, so this sender and
 *   `sendOnce` never give one nonce to two transactions of the swap wallet;
 * - confirmation is the wallet's own `confirmOutbound` (it only reads the row's hash and nonce).
 * When @wh/wallet grows a call variant, replace `sendCallOnce` by it and delete this file.
 */
import type { Sql } from '@wh/db'
import {
  type ChainClients,
  type ChainName,
  GAS_LIMIT_MARGIN_PCT,
  type OutboundRecord,
  OutboxConfigError,
  type OutboxDeps,
  OutboxMismatchError,
} from '@wh/wallet'
import { type Address, getAddress, type Hex, keccak256, type LocalAccount, TransactionReceiptNotFoundError } from 'viem'

/** What the swap package sends: the swap itself, or the one-time allowance for the pool. */
export type SwapTxPurpose = 'swap' | 'swap_approval'

export interface OutboundCall {
  chain: ChainName
  purpose: SwapTxPurpose
  refId: string
  step: number
  signer: LocalAccount
  /** the contract called */
  to: Address
  data: Hex
  value: bigint
  /** for the row (and people reading it): the token the call moves and how much */
  token: string
  amountBaseUnits: bigint
}

interface Row {
  id: string
  chain: string
  from_address: string
  to_address: string
  nonce: string | number
  raw_tx: string
  tx_hash: string
  state: OutboundRecord['state']
  gas_used: string | null
  effective_gas_price: string | null
  block_number: string | null
}

const COLUMNS =
  'id, chain, from_address, to_address, nonce, raw_tx, tx_hash, state, gas_used, effective_gas_price, block_number'

function toRecord(row: Row): OutboundRecord {
  const r: OutboundRecord = { id: row.id, txHash: row.tx_hash as Hex, nonce: Number(row.nonce), state: row.state }
  if (row.gas_used !== null) r.gasUsed = BigInt(row.gas_used)
  if (row.effective_gas_price !== null) r.effectiveGasPrice = BigInt(row.effective_gas_price)
  if (row.block_number !== null) r.blockNumber = BigInt(row.block_number)
  return r
}

function clientsOf(deps: OutboxDeps, chain: string): ChainClients {
  const c = deps.clients.get(chain as ChainName)
  if (!c) throw new OutboxConfigError('no clients for chain', { chain })
  return c
}

/** The outbox row of (purpose, refId, step), if any. */
export async function findOutboundCall(
  sql: Sql,
  purpose: SwapTxPurpose,
  refId: string,
  step: number,
): Promise<OutboundRecord | undefined> {
  const rows = await sql.unsafe<Row[]>(
    `select ${COLUMNS} from outbound_txs where purpose = $1 and ref_id = $2 and step = $3`,
    [purpose, refId, step],
  )
  return rows[0] ? toRecord(rows[0]) : undefined
}

/** A node's answers that mean "this very transaction is already in the pool or mined" (as the wallet's). */
function isAlreadyKnown(e: unknown): boolean {
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

async function broadcast(deps: OutboxDeps, row: Row): Promise<void> {
  try {
    await clientsOf(deps, row.chain).publicClient.request({
      method: 'eth_sendRawTransaction',
      params: [row.raw_tx as Hex],
    })
  } catch (e) {
    if (!isAlreadyKnown(e)) throw e
  }
  if (row.state === 'signed') {
    await deps.sql`update outbound_txs set state = 'broadcast', updated_at = now() where id = ${row.id} and state = 'signed'`
    row.state = 'broadcast'
  }
}

async function isMined(deps: OutboxDeps, row: Row): Promise<boolean> {
  try {
    await clientsOf(deps, row.chain).publicClient.getTransactionReceipt({ hash: row.tx_hash as Hex })
    return true
  } catch (e) {
    if (e instanceof TransactionReceiptNotFoundError) return false
    throw e
  }
}

async function signAndRecord(deps: OutboxDeps, t: OutboundCall): Promise<{ row: Row; created: boolean }> {
  const c = clientsOf(deps, t.chain)
  const from = getAddress(t.signer.address)
  const to = getAddress(t.to)
  // the wallet outbox's key: sends of one sender through either path are serialised
  const lockKey = `outbox:${t.chain}:${from.toLowerCase()}`
  return deps.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`
    const [existing] = await tx.unsafe<Row[]>(
      `select ${COLUMNS} from outbound_txs where purpose = $1 and ref_id = $2 and step = $3`,
      [t.purpose, t.refId, t.step],
    )
    if (existing) return { row: existing, created: false }
    const [{ max }] = (await tx`
      select max(nonce)::text as max from outbound_txs where chain = ${t.chain} and from_address = ${from}
    `) as unknown as [{ max: string | null }]
    const [pending, fees, estimate] = await Promise.all([
      c.publicClient.getTransactionCount({ address: from, blockTag: 'pending' }),
      c.publicClient.estimateFeesPerGas({ type: 'eip1559' }),
      c.publicClient.estimateGas({ account: from, to, value: t.value, data: t.data }),
    ])
    const gas = estimate + (estimate * GAS_LIMIT_MARGIN_PCT + 99n) / 100n
    const nonce = Math.max(max === null ? 0 : Number(max) + 1, pending)
    const raw = await t.signer.signTransaction({
      type: 'eip1559',
      chainId: c.info.chainId,
      nonce,
      to,
      value: t.value,
      data: t.data,
      gas,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    })
    const [row] = await tx.unsafe<Row[]>(
      `insert into outbound_txs (chain, purpose, ref_id, step, from_address, to_address, token, amount, nonce, raw_tx, tx_hash, state)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'signed')
       returning ${COLUMNS}`,
      [
        t.chain,
        t.purpose,
        t.refId,
        t.step,
        from,
        to,
        t.token,
        t.amountBaseUnits.toString(),
        nonce,
        raw,
        keccak256(raw),
      ],
    )
    return { row: row as Row, created: true }
  })
}

/**
 * Exactly once per (purpose, refId, step): signs and records (nonce, raw tx, hash) BEFORE the
 * broadcast; when the row exists, re-broadcasts its bytes unless mined, or just returns it. The
 * first call's calldata is the one signed; a later call for the same key with another chain,
 * sender or contract is refused (OutboxMismatchError). `deps.hooks` run as in the wallet's outbox.
 *
 * @example
 *   const rec = await sendCallOnce(outbox, { chain: 'base', purpose: 'swap', refId: `${swapId}:0`, step: 2,
 *     signer: swapWallet, to: pool, data, value: 0n, token: 'USDC', amountBaseUnits: amountIn })
 *   const done = await confirmOutbound(outbox, rec.id)
 */
export async function sendCallOnce(deps: OutboxDeps, t: OutboundCall): Promise<OutboundRecord> {
  if (!deps.registry.has(t.chain)) throw new OutboxConfigError('chain not in the registry', { chain: t.chain })
  if (!Number.isInteger(t.step) || t.step < 0 || t.step > 32_767) throw new RangeError('step must fit a smallint')
  let row: Row | undefined
  let created = false
  try {
    ;({ row, created } = await signAndRecord(deps, t))
  } catch (e) {
    // a racing caller inserted the same key (or took the nonce) first: take theirs
    if ((e as { code?: string }).code !== '23505') throw e
    const rows = await deps.sql.unsafe<Row[]>(
      `select ${COLUMNS} from outbound_txs where purpose = $1 and ref_id = $2 and step = $3`,
      [t.purpose, t.refId, t.step],
    )
    row = rows[0]
    if (!row) throw e
  }
  const same =
    row.chain === t.chain && row.from_address === getAddress(t.signer.address) && row.to_address === getAddress(t.to)
  if (!same) throw new OutboxMismatchError({ id: row.id, purpose: t.purpose, refId: t.refId, step: t.step })
  if (created) {
    await deps.hooks?.afterSigned?.(toRecord(row))
    await broadcast(deps, row)
    await deps.hooks?.afterBroadcast?.(toRecord(row))
  } else if ((row.state === 'signed' || row.state === 'broadcast') && !(await isMined(deps, row))) {
    await broadcast(deps, row)
  }
  return toRecord(row)
}
