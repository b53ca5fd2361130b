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
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  keccak256,
  type LocalAccount,
  parseTransaction,
  size,
  slice,
  TransactionReceiptNotFoundError,
} from 'viem'
import type { ChainInfo, ChainName } from './chains'
import type { ChainClients } from './clients'
import {
  type GasPlan,
  type OutboundPurpose,
  type PlanRequest,
  planGas,
  rpcOf,
  type TransferFeeEstimate,
  type WireCall,
} from './outbound-policy'
import { broadcastRaw, OutboundNotFoundError } from './outbox-confirm'
import type { OutboxDeps } from './outbox-deps'
import { onBroadcastRefused } from './outbox-fill'
import {
  clearRefusals,
  findById,
  findByRef,
  insertSigned,
  markBroadcast,
  maxNonce,
  type OutboundRecord,
  type OutboundRow,
  originalRawTx,
  toRecord,
} from './outbox-store'

export {
  CALL_GAS_CAPS,
  ETH_TO_CODE_GAS_BUDGET,
  ETH_TO_EOA_GAS,
  GAS_LIMIT_MARGIN_PCT,
  type GasPlan,
  type OutboundPurpose,
  PER_TX_GAS_CAP,
  planGas,
  probeChain,
  rpcOf,
  TOKEN_TRANSFER_GAS_CAP,
  type TransferFeeEstimate,
} from './outbound-policy'
export {
  CONTRADICTION_HOLD_AFTER_MS,
  CONTRADICTION_HOLD_READINGS,
  confirmOutbound,
  OUTBOUND_FEE_CAP_MULTIPLE,
  OUTBOUND_MAX_VERSIONS,
  OUTBOUND_REPLACE_AFTER_MS,
  OutboundNotFoundError,
  OutboundNotHeldError,
} from './outbox-confirm'
export type { OutboxDeps } from './outbox-deps'
export { ChainUnavailableError, OUTBOUND_REFUSALS_BEFORE_FILL } from './outbox-fill'
export { NONCE_FILLED_ERROR, type OutboundRecord, type OutboundState } from './outbox-store'

/** A payment: native value to `to`, or an ERC-20 `transfer(to, amount)` of the registry's token. */
export interface OutboundTransfer {
  kind?: 'transfer'
  chain: ChainName
  purpose: OutboundPurpose
  refId: string
  step?: number
  signer: LocalAccount
  to: Address
  token: 'ETH' | 'USDC'
  amountBaseUnits: bigint
  /**
   * The most the transaction may cost in gas (gas limit × max fee), checked before signing
   * (OutboundFeeAboveLimitError, retryable): a withdrawal of ETH never risks more gas than its amount.
   */
  maxFeeWeiAtMost?: bigint
}

/**
 * An arbitrary contract call: `data` sent to the contract `to` with `valueWei` of native value
 * (an ERC-20 approve, a bridge deposit). The calldata and the value live in the signed raw
 * transaction the row stores, so no column is needed for them.
 *
 * `token` and `amountBaseUnits` say which money movement the call belongs to and fill the row's
 * `token` / `amount` columns (bookkeeping only: nothing of them is sent). A bridge's approve and
 * deposit both carry the bridged USDC amount, so whichever row a resuming tick reads, it reads
 * the transfer's amount.
 */
export interface OutboundCall {
  kind: 'call'
  chain: ChainName
  purpose: OutboundPurpose
  refId: string
  step?: number
  signer: LocalAccount
  /** the contract called */
  to: Address
  data: Hex
  valueWei: bigint
  token: 'ETH' | 'USDC'
  amountBaseUnits: bigint
}

/** What `sendOnce` sends: a payment or a contract call. */
export type OutboundTx = OutboundTransfer | OutboundCall

/** The transaction a row holds, decoded from its stored raw bytes. */
export interface StoredTransaction {
  readonly record: OutboundRecord
  readonly chain: ChainName
  readonly from: Address
  /** the address the transaction was sent to (the token contract for an ERC-20 transfer) */
  readonly to: Address
  readonly data: Hex | undefined
  readonly valueWei: bigint
}

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
function callOf(info: ChainInfo, to: Address, token: OutboundTransfer['token'], amountBaseUnits: bigint): WireCall {
  const contract = tokenContract(info, token)
  if (contract === null) return { to, value: amountBaseUnits, data: undefined }
  return {
    to: contract,
    value: 0n,
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amountBaseUnits] }),
  }
}

function wireOf(info: ChainInfo, t: OutboundTx): WireCall {
  if (t.kind === 'call') return { to: getAddress(t.to), value: t.valueWei, data: t.data }
  return callOf(info, getAddress(t.to), t.token, t.amountBaseUnits)
}

/** The policy's request for `t` (outbound-policy.ts): its purpose, shape and fee limit. */
function planRequestOf(c: ChainClients, t: OutboundTx, call: WireCall): PlanRequest {
  const native = t.kind !== 'call' && tokenContract(c.info, t.token) === null
  return {
    chain: t.chain,
    purpose: t.purpose,
    from: getAddress(t.signer.address),
    call,
    kind: t.kind === 'call' ? 'call' : 'transfer',
    native,
    ...(t.kind !== 'call' && t.maxFeeWeiAtMost !== undefined && { maxFeeWeiAtMost: t.maxFeeWeiAtMost }),
  }
}

/** Only what a caller sizes with: the policy's gas limit and fees. */
const estimateOf = (p: GasPlan): TransferFeeEstimate => ({
  gasLimit: p.gasLimit,
  maxFeePerGas: p.maxFeePerGas,
  maxPriorityFeePerGas: p.maxPriorityFeePerGas,
  maxFeeWei: p.maxFeeWei,
})

/**
 * What a transfer would cost at most right now, as the outbox would sign it (the policy of
 * outbound-policy.ts: EIP-1559 fees from the node, the gas limit within the purpose's cap). The
 * sweep uses it to size a gas top-up and a native sweep's value; a sender that holds no gas yet is
 * estimated without fee fields (sizing only).
 *
 * @example
 *   const fee = await estimateTransferFee(deps, { chain: 'base', from, to: hot, token: 'USDC', amountBaseUnits: 5_000_000n })
 *   fee.maxFeeWei // the ETH the sender must hold beyond the value
 */
export async function estimateTransferFee(
  deps: Pick<OutboxDeps, 'clients'>,
  t: {
    chain: ChainName
    from: Address
    to: Address
    token: OutboundTransfer['token']
    amountBaseUnits: bigint
    purpose?: OutboundPurpose
  },
): Promise<TransferFeeEstimate> {
  const c = clientsOf(deps as OutboxDeps, t.chain)
  const call = callOf(c.info, getAddress(t.to), t.token, t.amountBaseUnits)
  const plan = await planGas(rpcOf(c.publicClient), {
    chain: t.chain,
    purpose: t.purpose ?? 'sweep',
    from: getAddress(t.from),
    call,
    kind: 'transfer',
    native: call.data === undefined,
    sizing: true,
  })
  return estimateOf(plan)
}

/**
 * What a contract call would cost at most right now (gas only: `valueWei` is on top), estimated
 * as `sendOnce` estimates it. The estimate reverts when the call would (e.g. a transferFrom
 * without the allowance mined yet).
 *
 * @example
 *   const fee = await estimateCallFee(deps, { chain: 'base', from: hot, to: vault, data, valueWei: 10n ** 12n })
 */
export async function estimateCallFee(
  deps: Pick<OutboxDeps, 'clients'>,
  t: { chain: ChainName; from: Address; to: Address; data: Hex; valueWei: bigint; purpose?: OutboundPurpose },
): Promise<TransferFeeEstimate> {
  const c = clientsOf(deps as OutboxDeps, t.chain)
  const plan = await planGas(rpcOf(c.publicClient), {
    chain: t.chain,
    purpose: t.purpose ?? 'bridge',
    from: getAddress(t.from),
    call: { to: getAddress(t.to), value: t.valueWei, data: t.data },
    kind: 'call',
    native: false,
    sizing: true,
  })
  return estimateOf(plan)
}

/** The 4-byte function selector of calldata, or undefined for none (a plain payment). */
function selectorOf(data: Hex | undefined): Hex | undefined {
  return data !== undefined && size(data) >= 4 ? slice(data, 0, 4) : undefined
}

async function assertSame(deps: OutboxDeps, row: OutboundRow, t: OutboundTx): Promise<void> {
  let same =
    row.chain === t.chain &&
    row.from_address === getAddress(t.signer.address) &&
    row.to_address === getAddress(t.to) &&
    row.token === t.token
  // a call must also call the same function: an approve is never taken for a deposit of the same
  // ref (read from the first version: a no-op filling the nonce calls nothing)
  if (same && t.kind === 'call') {
    const signed = (await originalRawTx(deps.sql, row.id)) ?? (row.raw_tx as Hex)
    same = selectorOf(parseTransaction(signed).data) === selectorOf(t.data)
  }
  if (!same) {
    throw new OutboxMismatchError({ id: row.id, purpose: t.purpose, refId: t.refId, step: t.step ?? 0 })
  }
}

/**
 * Sends the row's stored raw transaction; "already known" is success (the same bytes are out
 * there). A refusal is the policy's (outbox-fill.ts): refused for good, the nonce is filled by a
 * no-op and this returns; else it throws.
 */
async function broadcast(deps: OutboxDeps, row: OutboundRow, signer: LocalAccount): Promise<void> {
  const c = clientsOf(deps, row.chain)
  try {
    await broadcastRaw(c, row.raw_tx as Hex)
    if (row.refusals > 0) await clearRefusals(deps.sql, row.id)
  } catch (e) {
    await onBroadcastRefused(deps, c, row, signer, e)
  }
  if (row.state === 'signed') {
    await markBroadcast(deps.sql, row.id)
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
  t: OutboundTx,
  step: number,
): Promise<{ row: OutboundRow; created: boolean }> {
  const c = clientsOf(deps, t.chain)
  const from = getAddress(t.signer.address)
  const to = getAddress(t.to)
  const lockKey = `outbox:${t.chain}:${from.toLowerCase()}`
  return deps.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`
    // a concurrent caller of the same (purpose, refId, step) holds the same lock: re-read under it
    const existing = await findByRef(tx, t.purpose, t.refId, step)
    if (existing) return { row: existing, created: false }
    const max = await maxNonce(tx, t.chain, from)
    const call = wireOf(c.info, t)
    // the policy's gas limit and fees (outbound-policy.ts): refused here, before anything is signed
    const [pending, fee] = await Promise.all([
      c.publicClient.getTransactionCount({ address: from, blockTag: 'pending' }),
      planGas(rpcOf(c.publicClient), planRequestOf(c, t, call)),
    ])
    // the outbox may be ahead of the node (a signed row not broadcast yet) or behind it (a
    // transaction sent outside the outbox): the larger never reuses a nonce
    const nonce = Math.max(max === null ? 0 : max + 1, pending)
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
    const row = await insertSigned(tx, {
      chain: t.chain,
      purpose: t.purpose,
      refId: t.refId,
      step,
      from,
      to,
      token: t.token,
      amount: t.amountBaseUnits,
      nonce,
      rawTx: raw,
      txHash: keccak256(raw),
    })
    return { row, created: true }
  })
}

/**
 * Exactly once per (purpose, refId, step): signs and records (nonce, raw tx, hash) BEFORE
 * broadcasting; if a row exists, re-broadcasts that same raw tx (when not yet mined) or returns it.
 * `t` is a payment (`OutboundTransfer`) or a contract call (`OutboundCall`, `kind: 'call'`).
 *
 * The first call's amount is the one signed: a retry with another amount gets the stored
 * transaction back (the chain, sender, recipient and token must match, and for a call the
 * function selector, else OutboxMismatchError). A call's calldata and value are likewise the
 * first call's: a retry with a fresher fee quote gets the stored bytes, never a second call.
 * A failed broadcast (RPC down, sender short of gas) throws and leaves the row 'signed'; the next
 * call re-broadcasts the same bytes.
 *
 * @example
 *   const rec = await sendOnce(deps, { chain: 'base', purpose: 'sweep', refId: deposit.id, step: 1,
 *     signer: keyring.signer(deposit.hdIndex).account, to: hotWallet, token: 'USDC', amountBaseUnits: 5_000_000n })
 *   const done = await confirmOutbound(deps, rec.id)
 */
export async function sendOnce(deps: OutboxDeps, t: OutboundTx): Promise<OutboundRecord> {
  if (t.kind === 'call') {
    if (t.amountBaseUnits < 0n) throw new RangeError('amountBaseUnits must not be negative')
    if (t.valueWei < 0n) throw new RangeError('valueWei must not be negative')
  } else if (t.amountBaseUnits <= 0n) throw new RangeError('amountBaseUnits must be positive')
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
  await assertSame(deps, row, t)
  if (created) {
    await deps.hooks?.afterSigned?.(toRecord(row))
    await broadcast(deps, row, t.signer)
    await deps.hooks?.afterBroadcast?.(toRecord(row))
  } else if ((row.state === 'signed' || row.state === 'broadcast') && row.block_number === null) {
    // not seen mined yet: re-broadcast (a node may have dropped it, or the worker died before its
    // first broadcast). One mined already is left alone: confirmOutbound reads it, and nodes
    // answer the bytes of a mined transaction with errors of their own choosing.
    if (!(await minedAlready(deps, row))) await broadcast(deps, row, t.signer)
  }
  return toRecord(row)
}

/** Whether the row's current version has a receipt (cheap: one call). */
async function minedAlready(deps: OutboxDeps, row: OutboundRow): Promise<boolean> {
  try {
    await clientsOf(deps, row.chain).publicClient.getTransactionReceipt({ hash: row.tx_hash as Hex })
    return true
  } catch (e) {
    if (e instanceof TransactionReceiptNotFoundError) return false
    throw e
  }
}

/** The fee a mined transaction paid, in wei (gas used × effective gas price). */
export function feePaidWei(record: OutboundRecord): bigint {
  if (record.gasUsed === undefined || record.effectiveGasPrice === undefined) {
    throw new RangeError(`outbound ${record.id} is not mined yet`)
  }
  return record.gasUsed * record.effectiveGasPrice
}

/** The row's transaction as its business signed it: version 0's bytes (a fill of its nonce sends nothing of it). */
async function storedOf(sql: OutboxDeps['sql'], row: OutboundRow): Promise<StoredTransaction> {
  const tx = parseTransaction((await originalRawTx(sql, row.id)) ?? (row.raw_tx as Hex))
  if (!tx.to) throw new OutboxConfigError('stored transaction has no recipient', { id: row.id })
  return {
    record: toRecord(row),
    chain: row.chain as ChainName,
    from: getAddress(row.from_address),
    to: getAddress(tx.to),
    data: tx.data,
    valueWei: tx.value ?? 0n,
  }
}

/**
 * The row of (purpose, refId, step), with the transaction decoded from its stored bytes, or
 * undefined when none was signed yet. Reads only: nothing is broadcast.
 *
 * @example
 *   const deposit = await findOutbound(deps, { purpose: 'bridge', refId: transferId, step: 1 })
 *   deposit?.valueWei // the native value it carries (a bridge's message fee)
 */
export async function findOutbound(
  deps: Pick<OutboxDeps, 'sql'>,
  ref: { purpose: OutboundPurpose; refId: string; step?: number },
): Promise<StoredTransaction | undefined> {
  const row = await findByRef(deps.sql, ref.purpose, ref.refId, ref.step ?? 0)
  return row ? storedOf(deps.sql, row) : undefined
}

/** The row `id` with its transaction decoded from the stored bytes. */
export async function storedTransaction(deps: Pick<OutboxDeps, 'sql'>, id: string): Promise<StoredTransaction> {
  const row = await findById(deps.sql, id)
  if (!row) throw new OutboundNotFoundError(id)
  return storedOf(deps.sql, row)
}
