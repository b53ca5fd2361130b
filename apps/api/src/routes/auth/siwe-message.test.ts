import fc from 'fast-check'
import { SiweMessage } from 'siwe'
import { describe, expect, it } from 'vitest'
import { parseDateTime, parseSiweMessage } from './siwe-message'

const ADDR = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'

function build(over: Partial<ConstructorParameters<typeof SiweMessage>[0] & object> = {}): string {
  return new SiweMessage({
    domain: 'app.example.test',
    address: ADDR,
    statement: 'Sign in to the app',
    uri: 'https://app.example.test/login',
    version: '1',
    chainId: 1,
    nonce: 'Abc123def456',
    issuedAt: '2026-11-22T10:00:00.000Z',
    ...over,
  }).prepareMessage()
}

/** The `siwe` library's strict ABNF parser: the oracle. */
function siweAccepts(text: string): boolean {
  try {
    new SiweMessage(text)
    return true
  } catch {
    return false
  }
}

const valid = build({
  expirationTime: '2026-11-23T00:00:00Z',
  notBefore: '2026-11-22T00:00:00Z',
  requestId: 'req-1',
  resources: ['https://app.example.test/a', 'ipfs://bafybeigdyr'],
})

/** Each case breaks one rule of EIP-4361; the oracle must reject it, and so must we. */
const NEGATIVE: Record<string, string> = {
  'CRLF line endings': valid.replace(/\n/g, '\r\n'),
  'trailing newline': `${valid}\n`,
  'missing URI line': valid.replace(/URI: .*\n/, ''),
  'missing Version line': valid.replace(/Version: .*\n/, ''),
  'missing Chain ID line': valid.replace(/Chain ID: .*\n/, ''),
  'missing Nonce line': valid.replace(/Nonce: .*\n/, ''),
  'missing Issued At line': valid.replace(/Issued At: .*\n/, ''),
  'missing address': valid.replace(ADDR, ''),
  'missing domain': valid.replace('app.example.test wants', ' wants'),
  'version 2': valid.replace('Version: 1', 'Version: 2'),
  'chain id not a number': valid.replace('Chain ID: 1', 'Chain ID: ?'),
  'nonce shorter than 8': valid.replace('Nonce: Abc123def456', 'Nonce: Abc1234'),
  'nonce with a symbol': valid.replace('Nonce: Abc123def456', 'Nonce: Abc123-def456'),
  'URI before Version swapped': valid.replace(
    'URI: https://app.example.test/login\nVersion: 1',
    'Version: 1\nURI: https://app.example.test/login',
  ),
  'Nonce after Issued At': valid.replace(
    'Nonce: Abc123def456\nIssued At: 2026-11-22T10:00:00.000Z',
    'Issued At: 2026-11-22T10:00:00.000Z\nNonce: Abc123def456',
  ),
  'Not Before before Expiration Time': valid.replace(
    'Expiration Time: 2026-11-23T00:00:00Z\nNot Before: 2026-11-22T00:00:00Z',
    'Not Before: 2026-11-22T00:00:00Z\nExpiration Time: 2026-11-23T00:00:00Z',
  ),
  'Resources before Request ID': valid.replace(
    'Request ID: req-1\nResources:\n- https://app.example.test/a\n- ipfs://bafybeigdyr',
    'Resources:\n- https://app.example.test/a\n- ipfs://bafybeigdyr\nRequest ID: req-1',
  ),
  'non-ISO issued at': valid.replace('2026-11-22T10:00:00.000Z', 'Sun Nov 22 2026 10:00:00 GMT+0000'),
  'impossible date': valid.replace('2026-11-22T10:00:00.000Z', '2026-02-30T10:00:00.000Z'),
  'non-ISO expiration': valid.replace('Expiration Time: 2026-11-23T00:00:00Z', 'Expiration Time: tomorrow'),
  'extra blank line': valid.replace('\n\nSign in', '\n\n\nSign in'),
  'statement broken over two lines': valid.replace('Sign in to the app', 'Sign in\nto the app'),
  'URI that is not RFC 3986': valid.replace('URI: https://app.example.test/login', 'URI: _not a uri_'),
  'resource that is not RFC 3986': valid.replace('- ipfs://bafybeigdyr', '- _not_a_uri_'),
  'two resources on one line': valid.replace(
    '- https://app.example.test/a\n- ipfs://bafybeigdyr',
    '- https://app.example.test/a - https://app.example.test/b',
  ),
  'mixed-case address with a wrong checksum': valid.replace(ADDR, '0xf39fd6e51aad88F6F4ce6aB8827279cffFb92266'),
  'address too short': valid.replace(ADDR, ADDR.slice(0, 41)),
  'wrong header wording': valid.replace('wants you to sign in', 'wants you to log in'),
}

describe('strict SIWE parser', () => {
  it('reads every field of a full message', () => {
    const f = parseSiweMessage(valid)
    expect(f).toMatchObject({
      scheme: undefined,
      domain: 'app.example.test',
      address: ADDR,
      statement: 'Sign in to the app',
      uri: 'https://app.example.test/login',
      chainId: 1,
      nonce: 'Abc123def456',
      issuedAtMs: Date.parse('2026-11-22T10:00:00.000Z'),
      expirationTimeMs: Date.parse('2026-11-23T00:00:00Z'),
      notBeforeMs: Date.parse('2026-11-22T00:00:00Z'),
      requestId: 'req-1',
      resources: ['https://app.example.test/a', 'ipfs://bafybeigdyr'],
    })
  })

  for (const [name, text] of Object.entries(NEGATIVE)) {
    it(`rejects: ${name}`, () => {
      expect(text).not.toBe(valid)
      expect(siweAccepts(text), 'the oracle should reject this case too').toBe(false)
      expect(parseSiweMessage(text)).toBeUndefined()
    })
  }

  it('accepts an all-lowercase address and normalises it to EIP-55 (docs/architecture.md "Sign-in": stricter than the siwe library here)', () => {
    const f = parseSiweMessage(valid.replace(ADDR, ADDR.toLowerCase()))
    expect(f?.address).toBe(ADDR)
  })

  it('accepts a scheme before the domain and a port', () => {
    const text = build({ scheme: 'https', domain: 'localhost:3000' })
    expect(parseSiweMessage(text)).toMatchObject({ scheme: 'https', domain: 'localhost:3000' })
  })

  it('agrees with the siwe library on every message it builds (property)', () => {
    const alnum = fc.stringMatching(/^[A-Za-z0-9]{8,64}$/)
    const stmt = fc.option(fc.stringMatching(/^[A-Za-z0-9 .,:;!?'()@/=+-]{1,80}$/), { nil: undefined })
    const date = fc
      .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
      .map((d) => d.toISOString())
    let compared = 0
    fc.assert(
      fc.property(
        alnum,
        stmt,
        fc.integer({ min: 1, max: 2 ** 40 }),
        date,
        fc.option(date, { nil: undefined }),
        fc.option(date, { nil: undefined }),
        fc.option(fc.stringMatching(/^[A-Za-z0-9._~-]{0,20}$/), { nil: undefined }),
        fc.option(fc.array(fc.webUrl(), { maxLength: 3 }), { nil: undefined }),
        (nonce, statement, chainId, issuedAt, expirationTime, notBefore, requestId, resources) => {
          if (statement !== undefined && statement.trim() !== statement) return
          const text = build({
            nonce,
            chainId,
            issuedAt,
            ...(statement === undefined ? { statement: undefined } : { statement }),
            ...(expirationTime ? { expirationTime } : {}),
            ...(notBefore ? { notBefore } : {}),
            ...(requestId !== undefined ? { requestId } : {}),
            ...(resources && resources.length > 0 ? { resources } : {}),
          })
          if (!siweAccepts(text)) return
          compared++
          const ours = parseSiweMessage(text)
          const theirs = new SiweMessage(text)
          expect(ours, text).toBeDefined()
          expect(ours?.address).toBe(theirs.address)
          expect(ours?.nonce).toBe(theirs.nonce)
          expect(ours?.domain).toBe(theirs.domain)
          expect(ours?.chainId).toBe(theirs.chainId)
          expect(ours?.statement).toBe(theirs.statement)
          expect(ours?.issuedAtMs).toBe(Date.parse(theirs.issuedAt as string))
          expect(ours?.expirationTimeMs).toBe(theirs.expirationTime ? Date.parse(theirs.expirationTime) : undefined)
          expect(ours?.resources ?? []).toEqual(theirs.resources ?? [])
        },
      ),
      { numRuns: 300 },
    )
    // the property is only worth something if most generated messages reach the comparison
    expect(compared).toBeGreaterThan(200)
    // 300 runs of the siwe library's parser: about 2 s alone, several times that on a busy machine
  }, 30_000)

  it('parses RFC 3339 date-times with offsets and fractions', () => {
    expect(parseDateTime('2026-11-22T10:00:00Z')).toBe(Date.UTC(2026, 10, 22, 10))
    expect(parseDateTime('2026-11-22T12:00:00+02:00')).toBe(Date.UTC(2026, 10, 22, 10))
    expect(parseDateTime('2026-11-22T10:00:00.250Z')).toBe(Date.UTC(2026, 10, 22, 10, 0, 0, 250))
    expect(parseDateTime('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29))
    expect(parseDateTime('2025-02-29T00:00:00Z')).toBeUndefined()
    expect(parseDateTime('2026-13-01T00:00:00Z')).toBeUndefined()
    expect(parseDateTime('2026-11-22 10:00:00Z')).toBeUndefined()
  })
})
