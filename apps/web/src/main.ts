/**
 * The web console: an injected wallet (EIP-1193) signs in through @wh/client (spec 5.1), the token
 * lives in this tab's sessionStorage bound to the wallet address (spec 5.3), and the page shows the
 * user's deposit address (with a QR code), balances, statement, positions and withdrawals, plus
 * the public asset list, live prices and the strategy feed over the client's WebSocket helpers.
 *
 * No framework: a handful of sections (one module each) re-rendered from the API's answers, all
 * text set through textContent (nothing from the API is parsed as HTML). Amounts and times are
 * shown as people read them (./format).
 *
 * Where the API is: `?api=<url>`, else VITE_API_URL at build time, else the page's own origin in a
 * production build (the API serves it under /console/, docs/operations.md) and
 * http://127.0.0.1:3000 in the dev server.
 */
import { ApiClient, connectedAddress, type Eip1193Provider, signIn, TokenStore } from '@wh/client'
import { generate } from 'lean-qr'
import { toSvgDataURL } from 'lean-qr/extras/svg'
import { accountStreamSection } from './account-stream'
import { loadBalances } from './balances'
import { $, describe, say } from './dom'
import { loadAssets, startStreams } from './market'
import { positionsSection } from './positions'
import { statementSection } from './statement'
import { withdrawalsSection } from './withdrawals'

interface InjectedProvider extends Eip1193Provider {
  on?(event: string, listener: (...args: unknown[]) => void): void
}

const params = new URLSearchParams(location.search)
const API_URL =
  params.get('api') ??
  import.meta.env.VITE_API_URL ??
  // MODE, not DEV: DEV follows NODE_ENV, which a build run from a test sets to `test`
  (import.meta.env.MODE === 'development' ? 'http://127.0.0.1:3000' : location.origin)
const ASSETS = ['ETH', 'BTC']

const provider = (window as { ethereum?: InjectedProvider }).ethereum
const store = new TokenStore(sessionStorage)
let address: string | undefined
const api = new ApiClient({ baseUrl: API_URL, token: () => store.read(address) })

const statement = statementSection(api)
const withdrawals = withdrawalsSection(api)
const positions = positionsSection(api, () => loadBalances(api))
const accountStream = accountStreamSection(API_URL)

// ── wallet and session ──

async function refreshWallet() {
  address = provider ? await connectedAddress(provider) : undefined
  $('wallet-address').textContent = address ?? (provider ? 'no wallet connected' : 'no injected wallet (EIP-1193)')
  $<HTMLButtonElement>('connect').hidden = !!address || !provider
  await renderSession()
}

async function renderSession() {
  const token = store.read(address) // spec 5.3: none when the token was issued for another address
  const status = $('session-status')
  $<HTMLButtonElement>('sign-in').disabled = !address
  $<HTMLButtonElement>('sign-in').hidden = !!token
  $<HTMLButtonElement>('sign-out').hidden = !token
  $('private').hidden = !token
  accountStream.sync(token)
  if (!token) {
    status.textContent = address ? `Not signed in as ${address}` : 'Not signed in'
    status.dataset.state = 'none'
    return
  }
  status.textContent = `Signed in as ${address}`
  status.dataset.state = 'signed-in'
  await loadPrivate()
}

$('connect').addEventListener('click', async () => {
  try {
    await provider?.request({ method: 'eth_requestAccounts' })
    await refreshWallet()
  } catch (e) {
    say(describe(e))
  }
})

$('sign-in').addEventListener('click', async () => {
  if (!provider) return
  try {
    say('')
    // the SIWE domain is this page's host: the API's SIWE_DOMAIN must name it
    await signIn({ apiBaseUrl: API_URL, provider, store, domain: location.host, uri: location.origin })
    await refreshWallet()
  } catch (e) {
    say(`Sign-in failed: ${describe(e)}`)
  }
})

$('sign-out').addEventListener('click', async () => {
  store.clear()
  await renderSession()
})

$('refresh').addEventListener('click', async () => {
  const b = $<HTMLButtonElement>('refresh')
  b.disabled = true
  try {
    say('')
    await loadPrivate()
  } finally {
    b.disabled = false
  }
})

provider?.on?.('accountsChanged', () => void refreshWallet())

// ── the signed-in part ──

async function loadPrivate() {
  const results = await Promise.allSettled([
    loadDeposit(),
    loadBalances(api),
    statement.reload(),
    positions.load(),
    withdrawals.load(),
  ])
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed) say(describe(failed.reason))
}

async function loadDeposit() {
  const d = await api.depositAddress()
  $('deposit-address').textContent = d.address
  $('deposit-address').dataset.address = d.address
  $<HTMLImageElement>('deposit-qr').src = toSvgDataURL(generate(d.address), {
    on: 'black',
    off: 'white',
    padX: 2,
    padY: 2,
  })
}

void loadAssets(api)
startStreams(API_URL, ASSETS)
void refreshWallet()
