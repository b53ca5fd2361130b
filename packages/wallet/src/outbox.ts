/**
 * The crash-safe outbox (docs/chains.md "The outbox"): every transaction the service sends itself
 * (gas top-ups, sweeps, withdrawals, bridge legs) goes through here, exactly once per
 * (purpose, refId, step).
 *
 * Why the order sign → record → broadcast: a worker can die at any instruction. If it broadcast
 * first and recorded after, a crash in between would leave a transaction on chain that no row
 * knows, and the retry would build a second one (a double payment). Recording the raw signed
 * transaction first means a retry finds the row and re-broadcasts those very bytes: one nonce,
 * one hash, so the chain can include it at most once.
 *
 * Nonces are allocated under a Postgres advisory lock per (chain, from address): the larger of
 * max(nonce)+1 over the outbox and the chain's pending nonce. Two workers therefore never sign two
 * transactions with one nonce, and the unique (chain, from_address, nonce) backs that up.
 */
import { AppError } from '@wh/core'
import type { Sql } from '@wh/db'
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  keccak256,
  type LocalAccount,
  TransactionReceiptNotFoundError,
} from 'viem'
import type { ChainInfo, ChainName } from './chains'
import type { ChainClients } from './clients'

export type OutboundPurpose = 'gas_topup' | 'sweep' | 'withdrawal' | 'bridge'

export interface OutboundTransfer {
  chain: ChainName
  purpose: OutboundPurpose
  refId: string
  step?: number
  signer: LocalAccount
  to: Address
  token: 'ETH' | 'USDC'
  amountBaseUnits: bigint
}

export interface OutboundRecord {
  id: string
  txHash: Hex
  nonce: number
  state: 'signed' | 'broadcast' | 'confirmed' | 'failed'
  /** set once the transaction is mined (final or not) */
  gasUsed?: bigint
  effectiveGasPrice?: bigint
  blockNumber?: bigint
}

export interface OutboxDeps {
  sql: Sql
  clients: ReadonlyMap<ChainName, ChainClients>
  registry: ReadonlyMap<ChainName, ChainInfo>
  /**
   * Observation points for tests and tracing (optional, an addition to the shared contract):
   * `afterSigned` runs once the row is committed and before the first broadcast, the window the
   * crash tests kill the process in.
   */
  hooks?: {
    afterSigned?: (record: OutboundRecord) => Promise<void> | void
    /** runs after the first broadcast of a new row, before the caller sees the record */
    afterBroadcast?: (record: OutboundRecord) => Promise<void> | void
  }
}

/** Gas limit margin over the node's estimate, in percent (an estimate is a lower bound). */
export const GAS_LIMIT_MARGIN_PCT = 20n

/** A row exists for (purpose, refId, step) but names another chain, sender, recipient or token. */
export class OutboxMismatchError extends AppError {
  constructor(details: Record<string, unknown>) {
    super({
      code: 'OUTBOX_MISMATCH',
      message: 'an outbound transaction already exists for this (purpose, refId, step) with other parameters',
      details,
    })
  }
}

/** The chain or token is not in the registry (a wiring bug, not a retryable failure). */
export class OutboxConfigError extends AppError {
  constructor(message: string, details: Record<string, unknown>) {
    super({ code: 'OUTBOX_CONFIG', message, details })
  }
}

/** An outbound row id that does not exist. */
export class OutboundNotFoundError extends AppError {
  constructor(id: string) {
    super({ code: 'OUTBOUND_NOT_FOUND', statusCode: 404, message: 'no such outbound transaction', details: { id } })
  }
}

export interface TransferFeeEstimate {
  /** the node's estimate plus GAS_LIMIT_MARGIN_PCT */
  gasLimit: bigint
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  /** gasLimit × maxFeePerGas: the most the transaction can cost, in wei */
  maxFeeWei: bigint
}

interface OutboundRow {
  id: string
  chain: string
  purpose: string
  ref_id: string
  step: number
  from_address: string
  to_address: string
  token: string
  amount: string
  nonce: string | number
  raw_tx: string
  tx_hash: string
  state: OutboundRecord['state']
  gas_used: string | null
  effective_gas_price: string | null
  block_number: string | null
}

function toRecord(row: OutboundRow): OutboundRecord {
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

function tokenContract(info: ChainInfo, token: OutboundTransfer['token']): Address | null {
  const t = info.tokens.find((x) => x.symbol === token)
  if (!t) throw new OutboxConfigError('token not in the registry', { chain: info.name, token })
  return t.contract
}

/** What a transfer sends on the wire: native value, or an ERC-20 `transfer` call to the contract. */
function callOf(info: ChainInfo, to: Address, token: OutboundTransfer['token'], amountBaseUnits: bigint) {
  const contract = tokenContract(info, token)
  if (contract === null) return { to, value: amountBaseUnits, data: undefined }
  return {
    to: contract,
    value: 0n,
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amountBaseUnits] }),
  }
}

/**
 * What a transfer would cost at most right now: EIP-1559 fees from the node, the gas limit
 * estimated (an ERC-20 transfer's cost depends on the token and on the recipient's balance slot)
 * plus a margin. The sweep uses it to size a gas top-up and a native sweep's value.
 *
 * @example
 *   const fee = await estimateTransferFee(deps, { chain: 'base', from, to: hot, token: 'USDC', amountBaseUnits: 5_000_000n })
 *   fee.maxFeeWei // the ETH the sender must hold beyond the value
 */
export async function estimateTransferFee(
  deps: Pick<OutboxDeps, 'clients'>,
  t: { chain: ChainName; from: Address; to: Address; token: OutboundTransfer['token']; amountBaseUnits: bigint },
): Promise<TransferFeeEstimate> {
  const c = clientsOf(deps as OutboxDeps, t.chain)
  const call = callOf(c.info, t.to, t.token, t.amountBaseUnits)
  const [fees, estimate] = await Promise.all([
    c.publicClient.estimateFeesPerGas({ type: 'eip1559' }),
    c.publicClient.estimateGas({ account: t.from, to: call.to, value: call.value, data: call.data }),
  ])
  const gasLimit = estimate + (estimate * GAS_LIMIT_MARGIN_PCT + 99n) / 100n
  return {
    gasLimit,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    maxFeeWei: gasLimit * fees.maxFeePerGas,
  }
}

const SELECT_COLUMNS =
  'id, chain, purpose, ref_id, step, from_address, to_address, token, amount, nonce, raw_tx, tx_hash, state, gas_used, effective_gas_price, block_number'

async function findByRef(sql: Sql, purpose: string, refId: string, step: number): Promise<OutboundRow | undefined> {
  const rows = await sql.unsafe<OutboundRow[]>(
    `select ${SELECT_COLUMNS} from outbound_txs where purpose = $1 and ref_id = $2 and step = $3`,
    [purpose, refId, step],
  )
  return rows[0]
}

async function findById(sql: Sql, id: string): Promise<OutboundRow | undefined> {
  const rows = await sql.unsafe<OutboundRow[]>(`select ${SELECT_COLUMNS} from outbound_txs where id = $1`, [id])
  return rows[0]
}

function assertSame(row: OutboundRow, t: OutboundTransfer): void {
  const same =
    row.chain === t.chain &&
    row.from_address === getAddress(t.signer.address) &&
    row.to_address === getAddress(t.to) &&
    row.token === t.token
  if (!same) {
    throw new OutboxMismatchError({ id: row.id, purpose: t.purpose, refId: t.refId, step: t.step ?? 0 })
  }
}

/** A node's answers that mean "this very transaction is already in the pool or mined". */
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

/** Sends the stored raw transaction; "already known" is success (the same bytes are out there). */
async function broadcast(deps: OutboxDeps, row: OutboundRow): Promise<void> {
  const c = clientsOf(deps, row.chain)
  try {
    await c.publicClient.request({ method: 'eth_sendRawTransaction', params: [row.raw_tx as Hex] })
  } catch (e) {
    if (!isAlreadyKnown(e)) throw e
  }
  if (row.state === 'signed') {
    await deps.sql`update outbound_txs set state = 'broadcast', updated_at = now() where id = ${row.id} and state = 'signed'`
    row.state = 'broadcast'
  }
}

/**
 * Signs and stores a new transaction for `t`, or returns the row a concurrent caller stored first.
 * Runs in one Postgres transaction holding the (chain, from) advisory lock, so the nonce read and
 * the insert cannot interleave with another sender's.
 */
async function signAndRecord(
  deps: OutboxDeps,
  t: OutboundTransfer,
  step: number,
): Promise<{ row: OutboundRow; created: boolean }> {
  const c = clientsOf(deps, t.chain)
  const from = getAddress(t.signer.address)
  const to = getAddress(t.to)
  const lockKey = `outbox:${t.chain}:${from.toLowerCase()}`
  return deps.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`
    // a concurrent caller of the same (purpose, refId, step) holds the same lock: re-read under it
    const [existing] = await tx.unsafe<OutboundRow[]>(
      `select ${SELECT_COLUMNS} from outbound_txs where purpose = $1 and ref_id = $2 and step = $3`,
      [t.purpose, t.refId, step],
    )
    if (existing) return { row: existing, created: false }
    const [{ max }] = (await tx`
      select max(nonce)::text as max from outbound_txs where chain = ${t.chain} and from_address = ${from}
    `) as unknown as [{ max: string | null }]
    const [pending, fee] = await Promise.all([
      c.publicClient.getTransactionCount({ address: from, blockTag: 'pending' }),
      estimateTransferFee(deps, { chain: t.chain, from, to, token: t.token, amountBaseUnits: t.amountBaseUnits }),
    ])
    // the outbox may be ahead of the node (a signed row not broadcast yet) or behind it (a
    // transaction sent outside the outbox): the larger never reuses a nonce
    const nonce = Math.max(max === null ? 0 : Number(max) + 1, pending)
    const call = callOf(c.info, to, t.token, t.amountBaseUnits)
    const raw = await t.signer.signTransaction({
      type: 'eip1559',
      chainId: c.info.chainId,
      nonce,
      to: call.to,
      value: call.value,
      ...(call.data ? { data: call.data } : {}),
      gas: fee.gasLimit,
      maxFeePerGas: fee.maxFeePerGas,
      maxPriorityFeePerGas: fee.maxPriorityFeePerGas,
    })
    const txHash = keccak256(raw)
    const [row] = await tx.unsafe<OutboundRow[]>(
      `insert into outbound_txs (chain, purpose, ref_id, step, from_address, to_address, token, amount, nonce, raw_tx, tx_hash, state)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'signed')
       returning ${SELECT_COLUMNS}`,
      [t.chain, t.purpose, t.refId, step, from, to, t.token, t.amountBaseUnits.toString(), nonce, raw, txHash],
    )
    return { row: row as OutboundRow, created: true }
  })
}

/**
 * Exactly once per (purpose, refId, step): signs and records (nonce, raw tx, hash) BEFORE
 * broadcasting; if a row exists, re-broadcasts that same raw tx (when not yet mined) or returns it.
 *
 * The first call's amount is the one signed: a retry with another amount gets the stored
 * transaction back (the chain, sender, recipient and token must match, else OutboxMismatchError).
 * A failed broadcast (RPC down, sender short of gas) throws and leaves the row 'signed'; the next
 * call re-broadcasts the same bytes.
 *
 * @example
 *   const rec = await sendOnce(deps, { chain: 'base', purpose: 'sweep', refId: deposit.id, step: 1,
 *     signer: keyring.signer(deposit.hdIndex).account, to: hotWallet, token: 'USDC', amountBaseUnits: 5_000_000n })
 *   const done = await confirmOutbound(deps, rec.id)
 */
export async function sendOnce(deps: OutboxDeps, t: OutboundTransfer): Promise<OutboundRecord> {
  if (t.amountBaseUnits <= 0n) throw new RangeError('amountBaseUnits must be positive')
  const step = t.step ?? 0
  if (!deps.registry.has(t.chain)) throw new OutboxConfigError('chain not in the registry', { chain: t.chain })
  let row = await findByRef(deps.sql, t.purpose, t.refId, step)
  let created = false
  if (!row) {
    try {
      ;({ row, created } = await signAndRecord(deps, t, step))
    } catch (e) {
      // a racing caller inserted the same (purpose, ref, step) with another sender lock: take theirs
      if ((e as { code?: string }).code !== '23505') throw e
      row = await findByRef(deps.sql, t.purpose, t.refId, step)
      if (!row) throw e
    }
  }
  assertSame(row, t)
  if (created) {
    await deps.hooks?.afterSigned?.(toRecord(row))
    await broadcast(deps, row)
    await deps.hooks?.afterBroadcast?.(toRecord(row))
  } else if (row.state === 'signed' || row.state === 'broadcast') {
    // mined already? then a re-broadcast is pointless (and answers "nonce too low")
    const mined = await receiptOf(deps, row)
    if (!mined) await broadcast(deps, row)
  }
  return toRecord(row)
}

async function receiptOf(deps: OutboxDeps, row: OutboundRow) {
  try {
    return await clientsOf(deps, row.chain).publicClient.getTransactionReceipt({ hash: row.tx_hash as Hex })
  } catch (e) {
    if (e instanceof TransactionReceiptNotFoundError) return undefined
    throw e
  }
}

async function knownByHash(c: ChainClients, hash: Hex): Promise<boolean> {
  const tx = await c.publicClient.request({ method: 'eth_getTransactionByHash', params: [hash] })
  return tx !== null
}

/**
 * Checks the receipt; moves the row to confirmed/failed once it has the chain's confirmations;
 * returns the row. A row not mined yet is re-broadcast (a node may have dropped it, or the worker
 * died before its first broadcast); one whose nonce the chain has used for another transaction is
 * 'failed' (it can never be mined).
 */
export async function confirmOutbound(deps: OutboxDeps, id: string): Promise<OutboundRecord> {
  const row = await findById(deps.sql, id)
  if (!row) throw new OutboundNotFoundError(id)
  if (row.state === 'confirmed' || row.state === 'failed') return toRecord(row)
  const c = clientsOf(deps, row.chain)
  const info = deps.registry.get(row.chain as ChainName) ?? c.info
  // the nonce before the receipt: a used nonce with no receipt after it means another transaction took it
  const usedNonce = await c.publicClient.getTransactionCount({
    address: row.from_address as Address,
    blockTag: 'latest',
  })
  const receipt = await receiptOf(deps, row)
  if (!receipt) {
    // a node can advance the sender's nonce a moment before it serves the receipt (anvil does
    // under load): only a transaction the node does not know at all was replaced
    if (usedNonce > Number(row.nonce) && !(await knownByHash(c, row.tx_hash as Hex))) {
      const [failed] = await deps.sql.unsafe<OutboundRow[]>(
        `update outbound_txs set state = 'failed', error = 'nonce used by another transaction', gas_used = null,
           effective_gas_price = null, block_number = null, updated_at = now()
         where id = $1 and state in ('signed', 'broadcast') returning ${SELECT_COLUMNS}`,
        [row.id],
      )
      return toRecord(failed ?? ((await findById(deps.sql, id)) as OutboundRow))
    }
    await broadcast(deps, row)
    if (row.block_number !== null) {
      // it was mined once and is gone again (a reorg): forget the stale receipt
      await deps.sql`update outbound_txs set gas_used = null, effective_gas_price = null, block_number = null, updated_at = now() where id = ${row.id}`
      row.block_number = row.gas_used = row.effective_gas_price = null
    }
    return toRecord(row)
  }
  // eth_blockNumber straight from the node: viem's getBlockNumber caches for seconds
  const head = BigInt(await c.publicClient.request({ method: 'eth_blockNumber' }))
  const final = head >= receipt.blockNumber + BigInt(info.confirmations)
  const state = final ? (receipt.status === 'success' ? 'confirmed' : 'failed') : 'broadcast'
  const [updated] = await deps.sql.unsafe<OutboundRow[]>(
    `update outbound_txs set state = $2, gas_used = $3, effective_gas_price = $4, block_number = $5,
       error = $6, updated_at = now()
     where id = $1 and state in ('signed', 'broadcast') returning ${SELECT_COLUMNS}`,
    [
      row.id,
      state,
      receipt.gasUsed.toString(),
      receipt.effectiveGasPrice.toString(),
      receipt.blockNumber.toString(),
      final && receipt.status !== 'success' ? 'reverted' : null,
    ],
  )
  return toRecord(updated ?? ((await findById(deps.sql, id)) as OutboundRow))
}

/** The fee a mined transaction paid, in wei (gas used × effective gas price). */
export function feePaidWei(record: OutboundRecord): bigint {
  if (record.gasUsed === undefined || record.effectiveGasPrice === undefined) {
    throw new RangeError(`outbound ${record.id} is not mined yet`)
  }
  return record.gasUsed * record.effectiveGasPrice
}
