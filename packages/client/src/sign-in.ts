/**
 * spec 5.1 from the browser: get a nonce, build the message with the `siwe` library (never by
 * hand), ask the wallet to sign it (EIP-1193 personal_sign), post message and signature, and keep
 * the token per tab bound to the address (spec 5.3).
 */
import { getAddress } from 'ethers'
import { SiweMessage } from 'siwe'
import { readJson } from './errors'
import type { TokenStore } from './token-store'

/** The part of an EIP-1193 provider (an injected wallet) the sign-in needs. */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>
}

export interface SignInOptions {
  apiBaseUrl: string
  provider: Eip1193Provider
  store: TokenStore
  /** the SIWE domain the API is configured with (SIWE_DOMAIN); in a browser, location.host */
  domain: string
  /** the page asking; in a browser, location.origin */
  uri: string
  statement?: string
  fetch?: typeof fetch
  now?: () => Date
}

export interface Session {
  token: string
  /** EIP-55, as the API returned it */
  address: string
}

function utf8ToHex(s: string): string {
  return `0x${Array.from(new TextEncoder().encode(s), (b) => b.toString(16).padStart(2, '0')).join('')}`
}

export async function connectedAddress(provider: Eip1193Provider): Promise<string | undefined> {
  const accounts = (await provider.request({ method: 'eth_accounts' })) as string[]
  return accounts[0]
}

export async function signIn(opts: SignInOptions): Promise<Session> {
  const f = opts.fetch ?? fetch
  const accounts = (await opts.provider.request({ method: 'eth_requestAccounts' })) as string[]
  const raw = accounts[0]
  if (!raw) throw new Error('the wallet has no account connected')
  const chainId = Number.parseInt((await opts.provider.request({ method: 'eth_chainId' })) as string, 16)
  const { nonce } = await readJson<{ nonce: string }>(await f(`${opts.apiBaseUrl}/auth/nonce`))
  // wallets often report lowercase; the siwe library insists on EIP-55
  const address = getAddress(raw)
  const siwe = new SiweMessage({
    domain: opts.domain,
    address,
    statement: opts.statement ?? 'Sign in to Wheelhouse',
    uri: opts.uri,
    version: '1',
    chainId,
    nonce,
    issuedAt: (opts.now ?? (() => new Date()))().toISOString(),
  })
  const message = siwe.prepareMessage()
  const signature = (await opts.provider.request({
    method: 'personal_sign',
    params: [utf8ToHex(message), address],
  })) as string
  const session = await readJson<Session>(
    await f(`${opts.apiBaseUrl}/auth/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message, signature }),
    }),
  )
  opts.store.save(session.token, session.address)
  return session
}
