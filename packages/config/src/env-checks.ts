/**
 * The checks of meaning the environment's variables get beyond their schema (env.ts's ENV_SPEC):
 * each returns the reason a value is refused, or undefined. None echoes the value.
 */
import { isIP } from 'node:net'
import Type from 'typebox'
import { isAddress } from 'viem'

export type Check = (v: string) => string | undefined

export const str = (opts: Record<string, unknown> = {}) => Type.String({ minLength: 1, ...opts })
export const HEX32 = '^0x[0-9a-fA-F]{64}$'
export const INT = '^[0-9]+$'
export const DECIMAL = '^[0-9]+(\\.[0-9]+)?$'

export const url =
  (...protocols: string[]): Check =>
  (v) => {
    try {
      const u = new URL(v)
      return protocols.includes(u.protocol) ? undefined : `must be a ${protocols.join(' or ')} URL`
    } catch {
      return 'must be a URL'
    }
  }
export const address: Check = (v) => (isAddress(v, { strict: false }) ? undefined : 'must be a 0x address')
export const privateKey: Check = (v) => {
  if (!new RegExp(HEX32).test(v)) return 'must be 32 bytes of hex (0x + 64 hex digits)'
  const k = BigInt(v)
  // secp256k1 group order: a key must be in [1, n-1]
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
  return k > 0n && k < n ? undefined : 'is not a valid secp256k1 private key'
}
/** At most 18 decimals: the finest currency held at the exchange (ETH) has 18, so more could never matter. */
export const EPSILON = /^[0-9]{1,30}(\.[0-9]{1,18})?$/
export const reconcileEpsilon: Check = (v) =>
  EPSILON.test(v)
    ? undefined
    : "must be a non-negative decimal amount in the currency's own units (e.g. 0.01), with at most 18 decimals"
/**
 * TRUST_PROXY: false, true, or the proxies' addresses and CIDRs, as Fastify's trustProxy takes them.
 * No hop count: Fastify 5 trusts nothing for one (it cannot tell the proxy from a client that
 * connects directly and sends its own X-Forwarded-For), so it is refused rather than ignored.
 */
export type TrustProxy = boolean | readonly string[]
/** proxy-addr's names for address ranges, which Fastify's trustProxy accepts too */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal']
export function parseTrustProxy(v: string): TrustProxy | undefined {
  const t = v.trim()
  if (t === '' || t === 'false') return false
  if (t === 'true') return true
  if (/^[0-9]+$/.test(t)) return undefined
  const entries = t.split(',').map((e) => e.trim())
  const ok = entries.every((e) => {
    if (PROXY_RANGE_NAMES.includes(e)) return true
    const [ip = '', prefix, ...rest] = e.split('/')
    const family = isIP(ip)
    if (family === 0 || rest.length > 0) return false
    if (prefix === undefined) return true
    return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)
  })
  return ok ? entries : undefined
}
export const trustProxy: Check = (v) =>
  parseTrustProxy(v) === undefined
    ? 'must be true, false, or the comma-separated addresses or CIDRs of the proxies (e.g. 10.0.0.0/8); not a hop count'
    : undefined

/** API_PROCESSES' bound: more processes than this is a typo, not a machine */
export const MAX_API_PROCESSES = 256
export const positiveInt: Check = (v) =>
  /^[0-9]+$/.test(v) && Number(v) > 0 ? undefined : 'must be a positive integer'
export const usdcDecimals: Check = (v) =>
  (v.split('.')[1] ?? '').length <= 6 ? undefined : 'must have at most 6 decimals (USDC)'
export const rate: Check = (v) => (Number(v) <= 1 ? undefined : 'must be between 0 and 1')

/** Compares two plain decimal strings exactly. */
export function compareDecimal(a: string, b: string): number {
  const [ai = '', af = ''] = a.split('.')
  const [bi = '', bf = ''] = b.split('.')
  const len = Math.max(af.length, bf.length)
  const x = BigInt(ai + af.padEnd(len, '0'))
  const y = BigInt(bi + bf.padEnd(len, '0'))
  return x < y ? -1 : x > y ? 1 : 0
}

/** Freezes `o` and everything it holds. */
export function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const val of Object.values(o)) deepFreeze(val)
    Object.freeze(o)
  }
  return o
}
