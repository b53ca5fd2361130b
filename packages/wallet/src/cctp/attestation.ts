/**
 * The worker's client of Circle's attestation service (Iris; docs/chains.md "The L2 route"):
 * `GET /v2/messages/{sourceDomain}?transactionHash=…` and `GET /v2/burn/USDC/fees/{source}/{destination}`.
 * Circle's documented answers: 404 until the burn is observed, `messages: []` or `status` other than `complete`
 * while it waits for confirmations, `complete` with the message and its attestation; 429 past 35 requests a
 * second, which blocks the client for 5 minutes. Every answer is mapped to one of three outcomes so the caller
 * only decides when to ask again; nothing here retries by itself.
 */
import type { Hex } from 'viem'
import { ATTESTATION_RATE_LIMIT_BLOCK_MS } from './constants'

export type AttestationAnswer =
  /** signed: mint with `message` (the attested one) and `attestation` */
  | { readonly state: 'complete'; readonly message: Hex; readonly attestation: Hex; readonly nonce: Hex }
  /** observed or not yet, not signed yet (Circle's delayReason when it gives one) */
  | { readonly state: 'pending'; readonly reason: string }
  /** the service did not answer usefully: ask again after `retryAfterMs` at the earliest */
  | { readonly state: 'unavailable'; readonly reason: string; readonly retryAfterMs: number }

export interface AttestationClientOptions {
  readonly baseUrl: string
  readonly fetch?: typeof fetch
  /** one request gives up after this long (a slow service is an unavailable one) */
  readonly timeoutMs?: number
}

const DEFAULT_TIMEOUT_MS = 5_000

async function getJson(o: AttestationClientOptions, path: string): Promise<{ status: number; body: unknown }> {
  const res = await (o.fetch ?? fetch)(new URL(path, o.baseUrl), {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(o.timeoutMs ?? DEFAULT_TIMEOUT_MS),
  })
  const text = await res.text()
  let body: unknown
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  return { status: res.status, body }
}

interface IrisMessage {
  status?: unknown
  message?: unknown
  attestation?: unknown
  eventNonce?: unknown
  delayReason?: unknown
}

const HEX = /^0x[0-9a-fA-F]*$/

/** The attestation of the burn in `txHash` on `sourceDomain` (its first message: one burn per transaction). */
export async function fetchAttestation(
  o: AttestationClientOptions,
  q: { readonly sourceDomain: number; readonly txHash: Hex },
): Promise<AttestationAnswer> {
  let r: { status: number; body: unknown }
  try {
    r = await getJson(o, `/v2/messages/${q.sourceDomain}?transactionHash=${q.txHash}`)
  } catch (e) {
    return { state: 'unavailable', reason: `no answer: ${(e as Error).name}`, retryAfterMs: 0 }
  }
  if (r.status === 404) return { state: 'pending', reason: 'not observed yet' }
  if (r.status === 429)
    return { state: 'unavailable', reason: 'rate limited (429)', retryAfterMs: ATTESTATION_RATE_LIMIT_BLOCK_MS }
  if (r.status !== 200) return { state: 'unavailable', reason: `HTTP ${r.status}`, retryAfterMs: 0 }
  const [m] = ((r.body as { messages?: IrisMessage[] } | undefined)?.messages ?? []) as IrisMessage[]
  if (!m) return { state: 'pending', reason: 'observed, not processed yet' }
  if (m.status !== 'complete')
    return { state: 'pending', reason: `${String(m.status)}${m.delayReason ? ` (${String(m.delayReason)})` : ''}` }
  const { message, attestation, eventNonce } = m
  if (typeof message !== 'string' || !HEX.test(message) || message.length < 4)
    return { state: 'unavailable', reason: 'complete without a message', retryAfterMs: 0 }
  if (typeof attestation !== 'string' || !HEX.test(attestation) || attestation.length < 132)
    return { state: 'unavailable', reason: 'complete without an attestation', retryAfterMs: 0 }
  return {
    state: 'complete',
    message: message as Hex,
    attestation: attestation as Hex,
    nonce: String(eventNonce) as Hex,
  }
}

/** Circle's fees for a route, in hundredths of a basis point (1.3 bps → 130): fast (1000) and standard (2000). */
export async function fetchCctpFees(
  o: AttestationClientOptions,
  q: { readonly sourceDomain: number; readonly destinationDomain: number },
): Promise<{ readonly fast: bigint; readonly standard: bigint }> {
  const r = await getJson(o, `/v2/burn/USDC/fees/${q.sourceDomain}/${q.destinationDomain}`)
  if (r.status !== 200 || !Array.isArray(r.body)) throw new Error(`the CCTP fee read answered HTTP ${r.status}`)
  const of = (threshold: number) => {
    const e = (r.body as { finalityThreshold?: unknown; minimumFee?: unknown }[]).find(
      (x) => Number(x.finalityThreshold) === threshold,
    )
    const bps = Number(e?.minimumFee)
    if (!Number.isFinite(bps) || bps < 0) throw new Error(`the CCTP fee read names no fee for threshold ${threshold}`)
    return BigInt(Math.round(bps * 100))
  }
  return { fast: of(1000), standard: of(2000) }
}

/** `hundredths` hundredths of a basis point of `amount`, rounded up (what a transfer of it pays). */
export function feeAt(amount: bigint, hundredths: bigint): bigint {
  return (amount * hundredths + 999_999n) / 1_000_000n
}
