/**
 * A strict EIP-4361 parser: one pass over the lines, a pattern per line.
 *
 * Why not the `siwe` library's parser: it is strict but spends ~390 µs per message in its
 * ABNF engine, which alone would cap sign-in near 2,500/s per core. This parser accepts a
 * subset of what `siwe` accepts (a differential test runs both over generated messages and
 * the negative cases), in a few microseconds. Deliberate differences, all stricter except
 * the first (docs/architecture.md "Sign-in"):
 * - an all-lowercase address is accepted and normalised to EIP-55 (some wallets send it);
 *   a mixed-case address with a wrong checksum is rejected;
 * - date-times must use upper-case 'T' and 'Z';
 * - the nonce is at most 64 characters (the column's size);
 * - the domain must be a DNS name, IPv4 or bracketed IPv6 literal, with optional userinfo and port.
 */
import { toChecksumAddress } from '../../lib/keccak'

export interface SiweFields {
  readonly scheme: string | undefined
  readonly domain: string
  /** EIP-55 */
  readonly address: `0x${string}`
  readonly statement: string | undefined
  readonly uri: string
  readonly version: '1'
  readonly chainId: number
  readonly nonce: string
  readonly issuedAtMs: number
  readonly expirationTimeMs: number | undefined
  readonly notBeforeMs: number | undefined
  readonly requestId: string | undefined
  readonly resources: readonly string[] | undefined
}

const HEADER = ' wants you to sign in with your Ethereum account:'
const SCHEME = '[A-Za-z][A-Za-z0-9+.\\-]*'
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9\\-]{0,61}[A-Za-z0-9])?'
const HOST = `(?:\\[[0-9A-Fa-f:.]+\\]|${LABEL}(?:\\.${LABEL})*)`
const USERINFO = "(?:(?:[A-Za-z0-9\\-._~!$&'()*+,;=:]|%[0-9A-Fa-f]{2})*@)?"
const PREFIX_RE = new RegExp(`^(?:(${SCHEME})://)?(${USERINFO}${HOST}(?::[0-9]{1,5})?)$`)
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/
const STATEMENT_RE = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;= ]+$/
const URI_CHAR = "(?:[A-Za-z0-9\\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})"
const URI_RE = new RegExp(`^${SCHEME}:(?:${URI_CHAR}|[\\[\\]])*(?:#${URI_CHAR}*)?$`)
const CHAIN_ID_RE = /^[0-9]{1,15}$/
const NONCE_RE = /^[A-Za-z0-9]{8,64}$/
const PCHAR_RE = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*$/
const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:Z|([+-])(\d{2}):(\d{2}))$/

const MAX_MESSAGE_CHARS = 8192
const MAX_RESOURCES = 64

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

/** RFC 3339 date-time to epoch ms, or undefined when malformed or impossible (Feb 30). */
export function parseDateTime(s: string): number | undefined {
  const m = DATE_TIME_RE.exec(s)
  if (!m) return undefined
  const [y, mo, d, h, mi, sec] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || sec > 60) return undefined
  let ms = Date.UTC(y, mo - 1, d, h, mi, sec) + Math.floor(Number(`0${m[7] ?? ''}`) * 1000)
  if (m[8]) {
    const oh = Number(m[9])
    const om = Number(m[10])
    if (oh > 23 || om > 59) return undefined
    ms -= (m[8] === '+' ? 1 : -1) * (oh * 60 + om) * 60_000
  }
  return ms
}

function checksummed(address: string): `0x${string}` | undefined {
  if (!ADDRESS_RE.test(address)) return undefined
  const body = address.slice(2)
  const normal = toChecksumAddress(address)
  if (body === body.toLowerCase()) return normal
  return normal === address ? normal : undefined
}

/** The message's lines, read in order: a line, or a field when the next line carries its label. */
class Lines {
  i = 0
  constructor(readonly lines: readonly string[]) {}
  next(): string | undefined {
    return this.lines[this.i++]
  }
  field(label: string): string | undefined {
    const line = this.lines[this.i]
    if (line === undefined || !line.startsWith(label)) return undefined
    this.i++
    return line.slice(label.length)
  }
  get done(): boolean {
    return this.i === this.lines.length
  }
}

/** An optional date-time field: absent (null), present and valid (its ms), or invalid (undefined). */
function optionalTime(c: Lines, label: string): number | null | undefined {
  const raw = c.field(label)
  return raw === undefined ? null : parseDateTime(raw)
}

/** The fields after Issued At, each optional, in their order; undefined when one is malformed. */
function parseTail(c: Lines) {
  const exp = optionalTime(c, 'Expiration Time: ')
  const nbf = optionalTime(c, 'Not Before: ')
  if (exp === undefined || nbf === undefined) return undefined
  const requestId = c.field('Request ID: ')
  if (requestId !== undefined && !PCHAR_RE.test(requestId)) return undefined
  let resources: string[] | undefined
  if (c.lines[c.i] === 'Resources:') {
    c.i++
    resources = []
    while (!c.done) {
      const r = c.field('- ')
      if (r === undefined || !URI_RE.test(r) || resources.length >= MAX_RESOURCES) return undefined
      resources.push(r)
    }
  }
  if (!c.done) return undefined
  return { expirationTimeMs: exp ?? undefined, notBeforeMs: nbf ?? undefined, requestId, resources }
}

/** Parses a SIWE message; undefined for anything that is not a strict EIP-4361 message. */
export function parseSiweMessage(text: string): SiweFields | undefined {
  if (text.length > MAX_MESSAGE_CHARS || text.includes('\r')) return undefined
  const c = new Lines(text.split('\n'))
  const header = c.next()
  if (!header?.endsWith(HEADER)) return undefined
  const prefix = PREFIX_RE.exec(header.slice(0, -HEADER.length))
  if (!prefix) return undefined
  const address = checksummed(c.next() ?? '')
  if (!address) return undefined
  if (c.next() !== '') return undefined

  let statement: string | undefined
  const afterBlank = c.next()
  if (afterBlank === undefined) return undefined
  if (afterBlank !== '') {
    if (!STATEMENT_RE.test(afterBlank)) return undefined
    statement = afterBlank
    if (c.next() !== '') return undefined
  }

  const uri = c.field('URI: ')
  if (uri === undefined || !URI_RE.test(uri)) return undefined
  if (c.field('Version: ') !== '1') return undefined
  const chainId = c.field('Chain ID: ')
  if (chainId === undefined || !CHAIN_ID_RE.test(chainId)) return undefined
  const nonce = c.field('Nonce: ')
  if (nonce === undefined || !NONCE_RE.test(nonce)) return undefined
  const issuedAtRaw = c.field('Issued At: ')
  const issuedAtMs = issuedAtRaw === undefined ? undefined : parseDateTime(issuedAtRaw)
  if (issuedAtMs === undefined) return undefined
  const tail = parseTail(c)
  if (!tail) return undefined
  const { expirationTimeMs, notBeforeMs, requestId, resources } = tail

  return {
    scheme: prefix[1],
    domain: prefix[2] as string,
    address,
    statement,
    uri,
    version: '1',
    chainId: Number(chainId),
    nonce,
    issuedAtMs,
    expirationTimeMs,
    notBeforeMs,
    requestId,
    resources,
  }
}
