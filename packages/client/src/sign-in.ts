/**
 * spec 5.1 from the browser: get a nonce, build the EIP-4361 message with viem's SIWE helper
 * (never by hand), ask the wallet to sign it (EIP-1193 personal_sign), post message and signature,
 * and keep the token per tab bound to the address (spec 5.3).
 *
 * viem (`viem/siwe`, a peer dependency) replaced the `siwe` library, which pulls ethers into a
 * browser bundle (sizes in docs/architecture.md). The message is the text `siwe` prepared
 * (apps/api/test/client-sign-in.test.ts compares them) and the API's strict parser
 * (apps/api/src/routes/auth/siwe-message.ts) accepts it. viem checks the fields
 * before building: a domain must be a DNS name with a TLD, an IPv4 address or localhost (each
 * with an optional port), so a bare single-label host or an IPv6 literal throws
 * SiweInvalidMessageFieldError before the wallet is asked, where the API would accept it.
 */
import { getAddress, InvalidAddressError, isAddress } from 'viem'
import { createSiweMessage } from 'viem/siwe'
import { readJson } from './errors.js'
import type { TokenStore } from './token-store.js'

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

/**
 * The address in EIP-55. Like the API, refuses a mixed-case address whose checksum is wrong
 * (viem's getAddress alone would correct it); all lowercase is taken as it comes from wallets.
 */
function eip55(address: string): `0x${string}` {
  if (!isAddress(address, { strict: true })) throw new InvalidAddressError({ address })
  return getAddress(address)
}

/** The fields of the message signIn asks the wallet to sign. */
export interface SignInMessageFields {
  domain: string
  /** any case: the message carries it EIP-55 (the API refuses a mixed-case address with a wrong checksum) */
  address: string
  uri: string
  chainId: number
  /** from GET /auth/nonce */
  nonce: string
  issuedAt: Date
  /** default 'Sign in to Wheelhouse'; '' leaves the statement line out */
  statement?: string
}

/**
 * The EIP-4361 message signIn has the wallet sign, for a frontend that signs another way
 * (e.g. a wallet library's signMessage): post it with the signature to POST /auth/verify.
 */
export function signInMessage(fields: SignInMessageFields): string {
  return createSiweMessage({
    domain: fields.domain,
    address: eip55(fields.address),
    statement: fields.statement ?? 'Sign in to Wheelhouse',
    uri: fields.uri,
    version: '1',
    chainId: fields.chainId,
    nonce: fields.nonce,
    issuedAt: fields.issuedAt,
  })
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
  // wallets often report lowercase; the message and personal_sign carry it EIP-55
  const address = eip55(raw)
  const message = signInMessage({
    domain: opts.domain,
    address,
    statement: opts.statement,
    uri: opts.uri,
    chainId,
    nonce,
    issuedAt: (opts.now ?? (() => new Date()))(),
  })
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
