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

/** The message's fields when it parses, names our domain and is within its time window; else undefined. */
export function checkSiweMessage(message: string, opts: SiweCheckOptions): SiweFields | undefined {
  const fields = parseSiweMessage(message)
  if (!fields) return undefined
  if (fields.domain !== opts.domain) return undefined
  if (fields.expirationTimeMs !== undefined && opts.nowMs >= fields.expirationTimeMs) return undefined
  if (fields.notBeforeMs !== undefined && opts.nowMs < fields.notBeforeMs) return undefined
  return fields
}

/**
 * Whether `signature` is the message address's own key's (local recovery, no I/O). chainId is
 * deliberately not compared with anything for such a signature (spec 5.1).
 */
export function signedByKey(fields: SiweFields, message: string, signature: string): boolean {
  const signer = recoverPersonalSigner(message, signature)
  return signer !== undefined && signer === fields.address.toLowerCase()
}
