/**
 * What a node's error says about an outbound transaction (docs/hostile-world.md "One policy for
 * every outbound transaction"). Three answers, and only three, before anything is signed:
 *
 * - `row`: the transaction itself can never pass (its dry run reverts, hits an invalid opcode,
 *   needs more gas than its purpose's cap, or the node refuses it for good): the business row it
 *   serves fails, nothing else does;
 * - `funds`: the sender is short (a refill fixes it);
 * - `unknown`: anything else (a refused, rate-limited, slow or unreachable RPC, an answer nobody
 *   recognises). Never taken for the chain being down: only an independent probe of the chain
 *   (outbound-policy.ts `probeChain`) says that.
 *
 * Transport failures win over what a message says: an HTTP 5xx whose body mentions "revert" is
 * still the provider's failure. Classification reads viem's error types first and the node's text
 * only as the nodes word it (geth, reth, anvil, Erigon, Nethermind).
 */
import { AppError } from '@wh/core'
import {
  BaseError,
  ContractFunctionRevertedError,
  ExecutionRevertedError,
  HttpRequestError,
  InsufficientFundsError,
  TimeoutError,
} from 'viem'

/** Kept for callers that name the three old outcomes; `outboundFailureOf` is the policy's reading. */
export type SendFailure = 'reverts' | 'insufficient-funds' | 'unavailable'

/** Why a row's transaction can never pass, as the user and the operator read it. */
export type RowFailureReason = 'reverts' | 'gas-above-cap' | 'invalid'

export type OutboundFailure =
  | { readonly kind: 'row'; readonly reason: RowFailureReason }
  | { readonly kind: 'funds' }
  | { readonly kind: 'unknown' }

/** A transaction needs more gas than its purpose may spend (outbound-policy.ts): refused before signing. */
export class OutboundGasAboveCapError extends AppError {
  constructor(details: { chain: string; purpose: string; to: string; capGas: bigint }) {
    super({
      code: 'OUTBOUND_GAS_ABOVE_CAP',
      message: `the transaction needs more than ${details.capGas} gas, the most a ${details.purpose} may spend`,
      details,
    })
  }
}

/** The sender cannot pay the value and the gas the policy allows (checked before signing). */
export class OutboundSenderShortError extends AppError {
  constructor(details: { chain: string; from: string; balanceWei: bigint; needWei: bigint }) {
    super({ code: 'OUTBOUND_SENDER_SHORT', message: 'the sender cannot pay this transaction', details })
  }
}

/** The most the transaction could cost in gas is above the limit its caller set (a fee spike): try later. */
export class OutboundFeeAboveLimitError extends AppError {
  constructor(details: { chain: string; maxFeeWei: bigint; limitWei: bigint }) {
    super({
      code: 'OUTBOUND_FEE_ABOVE_LIMIT',
      retryable: true,
      message: 'the gas this transaction may cost at current fees is above its limit',
      details,
    })
  }
}

/** Every error in a cause chain (viem wraps; plain Errors carry `cause` too). */
function* causes(e: unknown): Generator<unknown> {
  const seen = new Set<unknown>()
  let cur = e
  while (cur && typeof cur === 'object' && !seen.has(cur)) {
    seen.add(cur)
    yield cur
    cur = (cur as { cause?: unknown }).cause
  }
}

function textOf(c: unknown): string {
  if (c instanceof BaseError) return `${c.details ?? ''} ${c.shortMessage}`
  return String((c as { message?: unknown }).message ?? '')
}

const TRANSPORT = (c: unknown) => c instanceof HttpRequestError || c instanceof TimeoutError
const REVERTS = /execution reverted|\brevert/i
const GAS_ABOVE_CAP = /gas required exceeds allowance|out of gas|OutOfGas/i
/** the EVM stopped for a reason no retry changes (geth, reth, anvil and Nethermind wordings) */
const INVALID =
  /invalid opcode|InvalidFEOpcode|opcode 0x[0-9a-f]+ not defined|EVM error \w+|invalid jump|stack (underflow|overflow|limit)|write protection|return data out of bounds|max code size exceeded|contract creation code storage out of gas|precompile/i
const FUNDS = /insufficient funds|exceeds balance|insufficient balance for transfer/i

/**
 * The policy's reading of an error thrown while estimating or dry-running a transaction (nothing
 * signed yet).
 *
 * @example
 *   outboundFailureOf(err).kind === 'row' // the business row fails; the chain is not down
 */
export function outboundFailureOf(e: unknown): OutboundFailure {
  let row: RowFailureReason | undefined
  let funds = false
  for (const c of causes(e)) {
    if (TRANSPORT(c)) return { kind: 'unknown' }
    if (c instanceof OutboundGasAboveCapError) return { kind: 'row', reason: 'gas-above-cap' }
    if (c instanceof OutboundSenderShortError || c instanceof InsufficientFundsError) funds = true
    if (c instanceof ExecutionRevertedError || c instanceof ContractFunctionRevertedError) row ??= 'reverts'
    const text = textOf(c)
    if (FUNDS.test(text)) funds = true
    else if (GAS_ABOVE_CAP.test(text)) row = 'gas-above-cap'
    else if (REVERTS.test(text)) row ??= 'reverts'
    else if (INVALID.test(text)) row ??= 'invalid'
  }
  if (funds) return { kind: 'funds' }
  return row ? { kind: 'row', reason: row } : { kind: 'unknown' }
}

/** What a node's refusal of signed bytes means for them. */
export type BroadcastRefusal = 'for-good' | 'underpriced' | 'funds' | 'unknown'

/** refused whatever is tried again with these bytes: the nonce must be filled by something else */
const FOR_GOOD =
  /intrinsic gas too (high|low)|exceeds block gas limit|gas limit (reached|too high)|gas_limit > env\.block\.gas_limit|transaction gas limit too high|invalid sender|invalid chain ?id|transaction type not supported|tx type not supported|oversized data|max initcode size exceeded|tip higher than fee cap|max priority fee per gas higher than max fee per gas/i
/** refused for now at this price: a replacement with higher fees gets it out */
const UNDERPRICED =
  /underpriced|fee cap less than block base fee|max fee per gas less than block base fee|feecap too low|txpool is full|transaction pool is full/i

/**
 * The policy's reading of a node's refusal of a signed transaction. `for-good`: no retry of these
 * bytes will ever be accepted (a gas limit above the block's, intrinsic gas, a malformed
 * transaction): their nonce is filled by a no-op (outbox-fill.ts). `underpriced`: the fee
 * replacement gets it out. `funds`: the sender waits for a refill. `unknown`: counted on the row.
 *
 * @example
 *   broadcastRefusalOf(err) === 'for-good' // sign a 0-value self transfer at that nonce
 */
export function broadcastRefusalOf(e: unknown): BroadcastRefusal {
  let verdict: BroadcastRefusal = 'unknown'
  for (const c of causes(e)) {
    if (TRANSPORT(c)) return 'unknown'
    if (c instanceof InsufficientFundsError) verdict = 'funds'
    const text = textOf(c)
    if (FOR_GOOD.test(text)) return 'for-good'
    if (UNDERPRICED.test(text)) verdict = 'underpriced'
    else if (FUNDS.test(text)) verdict = 'funds'
  }
  return verdict
}

/**
 * The old three-way reading, kept for callers outside the send path (the policy's reading is
 * `outboundFailureOf`): a row's failure is `reverts`, a sender short `insufficient-funds`, and
 * everything else `unavailable` (which no caller may take for the chain being down).
 *
 * @example
 *   sendFailureOf(err) === 'reverts' // the node's dry run reverts: the same call will fail again
 */
export function sendFailureOf(e: unknown): SendFailure {
  const f = outboundFailureOf(e)
  if (f.kind === 'funds') return 'insufficient-funds'
  return f.kind === 'row' ? 'reverts' : 'unavailable'
}
