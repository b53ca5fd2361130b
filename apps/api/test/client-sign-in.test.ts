import {
  ApiError,
  type Eip1193Provider,
  type KeyValueStorage,
  readJson,
  signIn,
  signInMessage,
  TokenStore,
} from '@wh/client'
import { SiweMessage } from 'siwe'
import { hexToString } from 'viem'
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseSiweMessage } from '../src/routes/auth/siwe-message'
import { type Api, DOMAIN, startApi } from './support'

class MemoryStorage implements KeyValueStorage {
  readonly map = new Map<string, string>()
  getItem = (k: string) => this.map.get(k) ?? null
  setItem = (k: string, v: string) => void this.map.set(k, v)
  removeItem = (k: string) => void this.map.delete(k)
}

/** An injected wallet backed by a test key, as a browser extension would answer. */
function walletOf(account: PrivateKeyAccount, chainId = 8453): Eip1193Provider & { account: PrivateKeyAccount } {
  return {
    account,
    async request({ method, params }) {
      if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [account.address.toLowerCase()]
      if (method === 'eth_chainId') return `0x${chainId.toString(16)}`
      if (method === 'personal_sign') {
        const [hex] = params as [`0x${string}`]
        return account.signMessage({ message: hexToString(hex) })
      }
      throw new Error(`unsupported ${method}`)
    },
  }
}

describe('the client SIWE flow against the API over HTTP (spec 5.1, 5.3)', () => {
  let api: Api
  let base: string
  beforeAll(async () => {
    api = await startApi()
    await api.app.listen({ host: '127.0.0.1', port: 0 })
    const addr = api.app.server.address()
    base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`
  })
  afterAll(() => api.close())

  it('signs in with an injected wallet, stores the token for that address, and reads the deposit address', async () => {
    const wallet = walletOf(privateKeyToAccount(generatePrivateKey()))
    const store = new TokenStore(new MemoryStorage())
    const session = await signIn({
      apiBaseUrl: base,
      provider: wallet,
      store,
      domain: DOMAIN,
      uri: `https://${DOMAIN}`,
    })
    expect(session.address).toBe(wallet.account.address)
    const token = store.read(wallet.account.address)
    expect(token).toBe(session.token)
    const res = await fetch(`${base}/deposit-address`, { headers: { authorization: `Bearer ${token}` } })
    const body = await readJson<{ address: string }>(res)
    expect(body.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    // switching the wallet to another account hides the token (spec 5.3)
    expect(store.read(privateKeyToAccount(generatePrivateKey()).address)).toBeUndefined()
  })

  it('surfaces a rejection as a typed ApiError with the API code', async () => {
    const wallet = walletOf(privateKeyToAccount(generatePrivateKey()))
    const store = new TokenStore(new MemoryStorage())
    const err = await signIn({
      apiBaseUrl: base,
      provider: wallet,
      store,
      domain: 'wrong.example',
      uri: 'https://wrong.example',
    }).catch((e) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ statusCode: 401, code: 'SIWE_REJECTED' })
    expect(store.read(wallet.account.address)).toBeUndefined()
  })
})

describe("the client's SIWE message (viem's helper) against the `siwe` library's and the API's parser", () => {
  const domains = [DOMAIN, 'localhost:5173', '127.0.0.1:3000', 'console.example.com:8443']
  const statements = [undefined, 'Log in to the console, please.']
  const chains = [1, 8453]

  it('is the text `siwe` prepared for the same fields, and the API parses back every field', () => {
    const nonce = 'a1B2c3D4e5F6g7H8'
    for (const domain of domains)
      for (const statement of statements)
        for (const chainId of chains) {
          const account = privateKeyToAccount(generatePrivateKey())
          const issuedAt = new Date(Date.UTC(2026, 10, 25, 8, 30, 15, 123))
          const uri = `https://${domain}/sign-in`
          const message = signInMessage({
            domain,
            // wallets often report lowercase: the message carries EIP-55
            address: account.address.toLowerCase(),
            statement,
            uri,
            chainId,
            nonce,
            issuedAt,
          })
          const expected = new SiweMessage({
            domain,
            address: account.address,
            statement: statement ?? 'Sign in to Wheelhouse',
            uri,
            version: '1',
            chainId,
            nonce,
            issuedAt: issuedAt.toISOString(),
          }).prepareMessage()
          expect(message).toBe(expected)
          expect(parseSiweMessage(message)).toMatchObject({
            domain,
            address: account.address,
            statement: statement ?? 'Sign in to Wheelhouse',
            uri,
            chainId,
            nonce,
            issuedAtMs: issuedAt.getTime(),
          })
        }
  })

  it("leaves the statement line out when it is '' (the API accepts a message without one)", () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const message = signInMessage({
      domain: DOMAIN,
      address: account.address,
      statement: '',
      uri: `https://${DOMAIN}`,
      chainId: 1,
      nonce: 'a1B2c3D4e5F6g7H8',
      issuedAt: new Date(),
    })
    // EIP-4361: address LF LF [ statement LF ] LF "URI: "
    expect(message.split('\n').slice(1, 5)).toEqual([account.address, '', '', `URI: https://${DOMAIN}`])
    expect(parseSiweMessage(message)).toMatchObject({ address: account.address, statement: undefined })
  })

  it('refuses, before any wallet is asked, a mixed-case address with a wrong checksum and a malformed nonce', () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const body = account.address.slice(2)
    const flipped = `0x${body.replace(/[a-f]/, (c) => c.toUpperCase())}`
    const fields = { domain: DOMAIN, uri: `https://${DOMAIN}`, chainId: 1, issuedAt: new Date() }
    expect(() => signInMessage({ ...fields, address: flipped, nonce: 'a1B2c3D4e5F6g7H8' })).toThrow(/address/i)
    expect(() => signInMessage({ ...fields, address: account.address, nonce: 'short' })).toThrow(/nonce/i)
  })
})
