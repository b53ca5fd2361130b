import { describe, expect, it } from 'vitest'
import { errorMessage, redactLogLine, redactSecrets, redactUrls, serializeError } from './log'

describe('redactUrls', () => {
  it("keeps a URL's scheme, host and port and replaces its credentials, path and query", () => {
    const cases: Array<[string, string]> = [
      ['URL: https://eth-mainnet.g.alchemy.com/v2/k3y', 'URL: https://eth-mainnet.g.alchemy.com/[redacted]'],
      ['at https://mainnet.infura.io/v3/k3y?x=1.', 'at https://mainnet.infura.io/[redacted]'],
      ['wss://user:pw@ws.example.com:8546/p)', 'wss://ws.example.com:8546/[redacted])'],
      ['https://user:pw@host', 'https://host/[redacted]'],
      ['postgres://app:secret@db:5432/wheelhouse', 'postgres://db:5432/[redacted]'],
      // nothing to hide: kept as it is
      ['URL: http://127.0.0.1:8545', 'URL: http://127.0.0.1:8545'],
      ['http://127.0.0.1:8545/ and more', 'http://127.0.0.1:8545/ and more'],
      ['no url here', 'no url here'],
    ]
    for (const [input, out] of cases) expect(redactUrls(input)).toBe(out)
  })

  it('stops at a JSON string boundary or escape, so a log line stays valid JSON', () => {
    const line = JSON.stringify({ msg: 'failed https://rpc.example/key123\nnext', url: 'http://h/k"q' })
    const out = redactUrls(line)
    expect(out).not.toContain('key123')
    expect(JSON.parse(out)).toEqual({
      msg: 'failed https://rpc.example/[redacted]\nnext',
      url: 'http://h/[redacted]"q',
    })
  })

  it('applies to serialized errors, their causes and errorMessage', () => {
    const err = new Error('outer https://a.example/secret-a', { cause: new Error('inner https://b.example/secret-b') })
    const s = JSON.stringify(serializeError(err))
    expect(s).not.toContain('secret-a')
    expect(s).not.toContain('secret-b')
    expect(errorMessage(err)).toBe('outer https://a.example/[redacted]')
    expect(errorMessage('plain https://c.example/s')).toBe('plain https://c.example/[redacted]')
  })
})

describe('serializeError of what is not an Error', () => {
  it('gives its text, never "[object Object]": an object\'s message, else its JSON', () => {
    expect(serializeError({ name: 'X', message: 'the exchange refused: https://h.example/k' })).toEqual({
      type: 'object',
      message: 'the exchange refused: https://h.example/[redacted]',
      stack: '',
    })
    expect(serializeError({ code: 14030 }).message).toBe('{"code":14030}')
    expect(serializeError('plain').message).toBe('plain')
  })
})

describe('redactSecrets', () => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJlLXBhcnQtb2YtdGhlLXRva2Vu'
  const sig = `0x${'ab'.repeat(65)}`

  it('drops the query of a /ws/ path, and any credential-named query value anywhere', () => {
    expect(redactSecrets(`{"req":{"url":"/ws/account?token=${jwt}&x=1"}}`)).toBe('{"req":{"url":"/ws/account"}}')
    expect(redactSecrets(`{"url":"/withdrawals?signature=${sig}&limit=5"}`)).toBe(
      '{"url":"/withdrawals?signature=[redacted]&limit=5"}',
    )
    expect(redactSecrets(`GET /x?a=1&access_token=${jwt}`)).toBe('GET /x?a=1&access_token=[redacted]')
    expect(redactSecrets('{"url":"/ETH/chart?interval=1h"}')).toBe('{"url":"/ETH/chart?interval=1h"}')
  })

  it('drops credential-named JSON values and Bearer/Basic credentials in text; keeps short values and the rest', () => {
    const line = JSON.stringify({
      token: jwt,
      signature: sig,
      authorization: `Bearer ${jwt}`,
      sessionToken: 'abcdefghijklmnop',
      password: 'correct horse battery staple',
      currency: 'USDC',
      msg: `sent Authorization: Bearer ${jwt} upstream`,
    })
    const out = redactSecrets(line)
    for (const secret of [jwt, sig, 'abcdefghijklmnop', 'correct horse battery staple'])
      expect(out).not.toContain(secret)
    expect(JSON.parse(out)).toMatchObject({
      token: '[redacted]',
      currency: 'USDC',
      msg: 'sent Authorization: Bearer [redacted] upstream',
    })
    // a currency in a `token` field stays readable; a line naming nothing sensitive is the same string
    expect(redactSecrets('{"token":"USDC","amount":"5"}')).toBe('{"token":"USDC","amount":"5"}')
    const plain = '{"level":30,"msg":"request completed","responseTime":1.2}'
    expect(redactSecrets(plain)).toBe(plain)
  })

  it('redactLogLine redacts URLs and credentials together', () => {
    expect(redactLogLine(`{"msg":"https://rpc.example/v2/KEY123 failed","token":"${jwt}"}`)).toBe(
      '{"msg":"https://rpc.example/[redacted] failed","token":"[redacted]"}',
    )
  })
})
