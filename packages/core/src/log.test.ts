import { describe, expect, it } from 'vitest'
import { errorMessage, redactUrls, serializeError } from './log'

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
