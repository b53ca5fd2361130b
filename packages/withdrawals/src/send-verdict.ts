/**
 * What a failure to prepare a withdrawal's transaction means for the row (docs/hostile-world.md
 * "One policy for every outbound transaction"), read by the outbound policy's classification
 * (@wh/wallet `outboundFailureOf`), never by a guess:
 *
 * - the row's own failure (the dry run reverts or hits an invalid opcode while the hot wallet holds
 *   the amount; the destination needs more than the budget): the row fails with a reason the user
 *   reads, nothing signed, its reserve released;
 * - the hot wallet short: the row waits out its backoff, an operator is alerted;
 * - fees above what the withdrawal may risk: the row waits out its backoff;
 * - anything else: the chain's own probe decides. A chain that does not answer its probe waits for
 *   the next run (and only then is it "unavailable"); one that answers makes the error the row's:
 *   an attempt with backoff, and past WITHDRAWAL_SEND_ERRORS_MAX the row fails with a reason.
 */
import { errorMessage } from '@wh/core'
import { type ChainName, type OutboundTransfer, outboundFailureOf } from '@wh/wallet'
import type { FailureCode } from './transitions'

/** Preparations of one withdrawal that may fail with an unknown error (the chain answering) before it fails. */
export const WITHDRAWAL_SEND_ERRORS_MAX = 5

/** A failure of the preparation that a later try may get past, with its stable code. */
export type Retry = {
  code: 'RPC_UNAVAILABLE' | 'HOT_WALLET_SHORT' | 'FEES_ABOVE_AMOUNT' | 'SEND_ERROR'
  /** the chain did not answer its own probe: its other rows wait for the next run */
  chainDown: boolean
  detail: string
}

export type Verdict = { fail: FailureCode } | Retry

/** What the verdict needs of the send's dependencies. */
export interface VerdictPorts {
  balanceOf(chain: ChainName, token: OutboundTransfer['token'], address: `0x${string}`): Promise<bigint>
  /** the chain answers its id and height (an independent probe); true when no probe is wired */
  probe?(chain: ChainName): Promise<boolean>
}

export const errorText = (e: unknown) => errorMessage(e).slice(0, 300)

/**
 * The verdict on `err`, thrown by the outbox before anything was signed for `t`. `sendErrors` is
 * the row's count of unknown errors so far.
 */
export async function verdictOf(
  ports: VerdictPorts,
  t: OutboundTransfer,
  err: unknown,
  sendErrors: number,
): Promise<Verdict> {
  const code = (err as { code?: unknown }).code
  if (code === 'OUTBOUND_FEE_ABOVE_LIMIT')
    return { code: 'FEES_ABOVE_AMOUNT', chainDown: false, detail: errorText(err) }
  const failure = outboundFailureOf(err)
  if (failure.kind === 'unknown') return unknownVerdict(ports, t, err, sendErrors)
  if (failure.kind === 'row' && failure.reason === 'gas-above-cap') return { fail: 'DESTINATION_GAS_ABOVE_BUDGET' }
  let held: bigint
  try {
    held = await ports.balanceOf(t.chain, t.token, t.signer.address)
  } catch (e) {
    return unknownVerdict(ports, t, e, sendErrors)
  }
  // a token that reverts a transfer above the sender's balance is the wallet's shortage, not the destination's
  if (held < t.amountBaseUnits || failure.kind === 'funds')
    return { code: 'HOT_WALLET_SHORT', chainDown: false, detail: `holds ${held} of ${t.amountBaseUnits}` }
  return { fail: 'DESTINATION_REFUSED' }
}

async function unknownVerdict(
  ports: VerdictPorts,
  t: OutboundTransfer,
  err: unknown,
  sendErrors: number,
): Promise<Verdict> {
  if ((err as { code?: unknown }).code === 'CHAIN_UNAVAILABLE' || !(await (ports.probe?.(t.chain) ?? true)))
    return { code: 'RPC_UNAVAILABLE', chainDown: true, detail: errorText(err) }
  if (sendErrors + 1 >= WITHDRAWAL_SEND_ERRORS_MAX) return { fail: 'SEND_ERROR' }
  return { code: 'SEND_ERROR', chainDown: false, detail: errorText(err) }
}
