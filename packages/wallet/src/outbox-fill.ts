/**
 * Never leave a nonce gap (docs/hostile-world.md "One policy for every outbound transaction"): when
 * a node refuses a signed transaction for good (its gas limit above the block's, intrinsic gas, a
 * malformed transaction), no later transaction of that sender can be mined until something takes
 * its nonce. That something is a no-op: a 0-value transfer of the sender to itself, 21,000 gas (and
 * the chain's L1 data share where its gas carries one: outbound-policy.ts `l1DataGas`), at
 * the same nonce and with fees above the refused version's (a pool that holds it must take the
 * replacement). It is a version of the same outbox row, recorded before it is broadcast like any
 * replacement, so:
 *
 * - the row's versions still share one nonce: at most one of them is ever mined, so a fill can
 *   never pay twice, whichever wins (the original bytes may still be mined somewhere);
 * - the business row fails only once the fill is mined at confirmed depth (confirmOutbound reads
 *   the mined version; a mined fill ends the row `failed` with `filled`); before that its reserve
 *   stays, since the original could still be mined.
 *
 * Bytes refused with an error nobody recognises, in a row, are counted while the chain answers its
 * own probe, and filled past OUTBOUND_REFUSALS_BEFORE_FILL: safe for the same reason. A nonce the
 * chain has used already is never filled.
 */
import { AppError, errorMessage } from '@wh/core'
import {
  type Address,
  type Hex,
  keccak256,
  type LocalAccount,
  parseTransaction,
  type TransactionSerializableEIP1559,
} from 'viem'
import type { ChainClients } from './clients'
import { currentFees, ETH_TO_EOA_GAS, l1DataGas, probeChain, rpcOf } from './outbound-policy'
import type { OutboxDeps } from './outbox-deps'
import { countRefusal, type OutboundRow, type OutboundVersion, recordReplacement, versionsOf } from './outbox-store'
import { broadcastRefusalOf } from './send-errors'

/** Broadcasts in a row refused with an unknown error (the chain answering its probe) before the nonce is filled. */
export const OUTBOUND_REFUSALS_BEFORE_FILL = 5
/** Versions a row may have at most, fills included (replacements alone stop at OUTBOUND_MAX_VERSIONS). */
export const OUTBOUND_MAX_VERSIONS_WITH_FILLS = 9

/** The chain did not answer its own probe: nothing about the row may be concluded from this error. */
export class ChainUnavailableError extends AppError {
  constructor(chain: string, detail: string) {
    super({
      code: 'CHAIN_UNAVAILABLE',
      retryable: true,
      message: `chain ${chain} does not answer its probe (${detail})`,
      details: { chain },
    })
  }
}

/** x raised by 12.5 % and one wei: over the 10 % bump nodes require of a replacement. */
export const bump = (x: bigint) => x + x / 8n + 1n
// biome-ignore lint/complexity/useMathMinMax: Math.max throws on bigint
export const maxOf = (...xs: bigint[]) => xs.reduce((a, b) => (a > b ? a : b))

/**
 * Signs and records the no-op that fills row's nonce, then broadcasts it. Returns false when the
 * nonce is being filled already (a fill's replacement is the stuck path's), the versions' bound is
 * reached, or a concurrent caller recorded a version first (nothing is sent then).
 */
export async function fillNonce(
  deps: OutboxDeps,
  c: ChainClients,
  row: OutboundRow,
  signer: LocalAccount,
  reason: string,
): Promise<boolean> {
  const versions = await versionsOf(deps.sql, row.id)
  if (versions.some((v) => v.fills_nonce) || versions.length >= OUTBOUND_MAX_VERSIONS_WITH_FILLS) return false
  // a nonce the chain has used already needs no filling: a version of the row (or something else)
  // took it, and the confirmation reads which
  const used = await c.publicClient.getTransactionCount({ address: row.from_address as Address, blockTag: 'latest' })
  if (used > Number(row.nonce)) return false
  const current = parseTransaction(row.raw_tx as Hex) as TransactionSerializableEIP1559
  const [fees, l1Gas] = await Promise.all([
    currentFees(rpcOf(c.publicClient)),
    l1DataGas(rpcOf(c.publicClient), row.chain, signer.address, undefined),
  ])
  const priority = maxOf(fees.maxPriorityFeePerGas, bump(current.maxPriorityFeePerGas ?? 0n))
  const maxFee = maxOf(fees.maxFeePerGas, bump(current.maxFeePerGas ?? 0n), priority)
  const raw = await signer.signTransaction({
    type: 'eip1559',
    chainId: c.info.chainId,
    nonce: Number(row.nonce),
    to: signer.address,
    value: 0n,
    gas: ETH_TO_EOA_GAS + l1Gas,
    maxFeePerGas: maxFee,
    maxPriorityFeePerGas: priority,
  })
  const stored = await recordReplacement(deps.sql, row.id, {
    version: (versions.at(-1) as OutboundVersion).version + 1,
    rawTx: raw,
    txHash: keccak256(raw),
    previousHash: row.tx_hash as Hex,
    fillsNonce: true,
    reason: `refused for good: ${reason}`,
  })
  if (!stored) return false
  await deps.alerter?.alert('outbound transaction refused for good; its nonce is filled by a no-op', {
    outboundId: row.id,
    chain: row.chain,
    purpose: row.purpose,
    refId: row.ref_id,
    nonce: String(row.nonce),
    reason: reason.slice(0, 200),
  })
  row.raw_tx = raw
  row.tx_hash = keccak256(raw)
  row.error = `refused for good: ${reason}`
  // best effort: a node that refuses the fill now is asked again by the next confirmation
  await broadcastRawOf(c, raw).catch(() => undefined)
  return true
}

async function broadcastRawOf(c: ChainClients, raw: Hex): Promise<void> {
  await c.publicClient.request({ method: 'eth_sendRawTransaction', params: [raw] })
}

/**
 * A node refused row's bytes (`err`, not "already known"): what the policy does about it. For good:
 * the nonce is filled (returns normally once the fill is recorded). Unknown, with the chain
 * answering its probe: counted, and filled past the bound. Otherwise the error is thrown again
 * (a fee too low waits for the replacement, a sender short for its refill), or ChainUnavailableError.
 */
export async function onBroadcastRefused(
  deps: OutboxDeps,
  c: ChainClients,
  row: OutboundRow,
  signer: LocalAccount | undefined,
  err: unknown,
): Promise<void> {
  const kind = broadcastRefusalOf(err)
  const detail = errorMessage(err).slice(0, 200)
  if (kind === 'for-good') {
    if (signer && (await fillNonce(deps, c, row, signer, detail))) return
    if (row.error?.startsWith('refused for good')) return // filled already: the fill is what is out there
    throw err
  }
  if (kind !== 'unknown') throw err
  const probe = await probeChain(rpcOf(c.publicClient), c.info.chainId)
  if (!probe.ok) throw new ChainUnavailableError(row.chain, probe.detail)
  const refusals = await countRefusal(deps.sql, row.id)
  if (refusals >= OUTBOUND_REFUSALS_BEFORE_FILL && signer) {
    if (await fillNonce(deps, c, row, signer, `refused ${refusals} times: ${detail}`)) return
  }
  throw err
}
