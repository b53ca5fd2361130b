/**
 * The checks of spec 5.1, cheapest first: parse, domain, time window, then the signature.
 * Nonce redemption follows in the route (it needs the database), after the signature, so a
 * message whose signature fails leaves its nonce unused (spec 4.1 order).
 */
import { recoverPersonalSigner } from '../../lib/recover'
import { parseSiweMessage, type SiweFields } from './siwe-message'

export interface SiweCheckOptions {
  /** SIWE_DOMAIN; never empty (config refuses it) */
  readonly domain: string
  readonly nowMs: number
}

/** The verified message, or undefined for any failure (the route answers one opaque error). */
export function verifySiweSignature(
  message: string,
  signature: string,
  opts: SiweCheckOptions,
): SiweFields | undefined {
  const fields = parseSiweMessage(message)
  if (!fields) return undefined
  if (fields.domain !== opts.domain) return undefined
  if (fields.expirationTimeMs !== undefined && opts.nowMs >= fields.expirationTimeMs) return undefined
  if (fields.notBeforeMs !== undefined && opts.nowMs < fields.notBeforeMs) return undefined
  // chainId is deliberately not compared with anything (spec 5.1).
  const signer = recoverPersonalSigner(message, signature)
  if (signer === undefined || signer !== fields.address.toLowerCase()) return undefined
  return fields
}
