/**
 * The wallet and the session (spec 5.1, 5.3): an injected EIP-1193 wallet, the sign-in through
 * @wh/client, and the token in this tab's sessionStorage bound to the address it was issued for.
 * `token` is the current address's token or undefined; everything signed-in follows it.
 */
import { computed, signal } from '@preact/signals'
import { ApiClient, connectedAddress, type Eip1193Provider, signIn, TokenStore } from '@wh/client'
import { API_URL } from './config'

interface InjectedProvider extends Eip1193Provider {
  on?(event: string, listener: (...args: unknown[]) => void): void
}

const provider = (window as { ethereum?: InjectedProvider }).ethereum
const store = new TokenStore(sessionStorage)

export const hasWallet = provider !== undefined
/** the wallet's connected account, undefined before it is connected */
export const address = signal<string | undefined>(undefined)
/** bumped when the store changes (sign-in, sign-out): the store itself is not reactive */
const stored = signal(0)
/** spec 5.3: undefined when the stored token was issued for another address */
export const token = computed(() => {
  void stored.value
  return store.read(address.value)
})
export const signedIn = computed(() => token.value !== undefined)

export const api = new ApiClient({ baseUrl: API_URL, token: () => store.read(address.peek()) })

let asked = 0

/** Reads the connected account; a read overtaken by a later one (a connect meanwhile) is dropped. */
export async function refreshWallet(): Promise<void> {
  const n = ++asked
  const a = provider ? await connectedAddress(provider) : undefined
  if (n === asked) address.value = a
}

export async function connectWallet(): Promise<void> {
  await provider?.request({ method: 'eth_requestAccounts' })
  await refreshWallet()
}

/** Sign-In with Ethereum: the SIWE domain is this page's host (the API's SIWE_DOMAIN must name it). */
export async function signInWithWallet(): Promise<void> {
  if (!provider) return
  await signIn({ apiBaseUrl: API_URL, provider, store, domain: location.host, uri: location.origin })
  await refreshWallet()
  stored.value++
}

export function signOut(): void {
  store.clear()
  stored.value++
}

/** A session the API refused (401): forgotten, so the page asks to sign in again. */
export function sessionExpired(): void {
  signOut()
}

provider?.on?.('accountsChanged', () => void refreshWallet())
