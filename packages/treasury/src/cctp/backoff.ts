/**
 * How long the worker waits before asking Circle's attestation service again about one burn: Circle asks for
 * polls no more often than every 5 s and blocks a client 5 minutes past 35 requests a second
 * (docs/chains.md "The L2 route"), so the wait doubles from 5 s up to 5 minutes.
 */
import { ATTESTATION_POLL_MIN_MS, ATTESTATION_RATE_LIMIT_BLOCK_MS } from '@wh/wallet'

/** The wait after `attempts` reads that did not complete the transfer. */
export function backoffMs(attempts: number): number {
  return Math.min(ATTESTATION_POLL_MIN_MS * 2 ** Math.min(attempts, 16), ATTESTATION_RATE_LIMIT_BLOCK_MS)
}
