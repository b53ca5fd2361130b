/**
 * The web console: an injected wallet (EIP-1193) signs in through @wh/client (spec 5.1), the token
 * lives in this tab's sessionStorage bound to the wallet address (spec 5.3), and the page shows the
 * user's deposit address (with a QR code), portfolio, positions and withdrawals, plus the public
 * asset list, live prices and the strategy feed over the client's WebSocket helpers.
 *
 * No framework: a handful of sections re-rendered from the API's answers, all text set through
 * textContent (nothing from the API is parsed as HTML).
 */
import {
  ApiClient,
  ApiError,
  type CreateWithdrawalBody,
  connectedAddress,
  type Eip1193Provider,
  openPriceStream,
  openStrategyStream,
  type PriceUpdate,
  signIn,
  TokenStore,
  type WithdrawalRoute,
} from '@wh/client'
import { generate } from 'lean-qr'
import { toSvgDataURL } from 'lean-qr/extras/svg'

interface InjectedProvider extends Eip1193Provider {
  on?(event: string, listener: (...args: unknown[]) => void): void
}

const params = new URLSearchParams(location.search)
const API_URL = params.get('api') ?? import.meta.env.VITE_API_URL ?? 'http://127.0.0.1:3000'
const ASSETS = ['ETH', 'BTC']

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T
const provider = (window as { ethereum?: InjectedProvider }).ethereum
const store = new TokenStore(sessionStorage)
let address: string | undefined
const api = new ApiClient({ baseUrl: API_URL, token: () => store.read(address) })

function say(text: string, kind: 'error' | 'ok' = 'error') {
  const m = $('message')
  m.textContent = text
  m.dataset.kind = kind
}

function describe(e: unknown): string {
  if (e instanceof ApiError) return `${e.code}: ${e.message}`
  return e instanceof Error ? e.message : String(e)
}

function table(el: HTMLElement, head: string[], rows: (string | number | null | undefined)[][], empty = 'none') {
  el.replaceChildren()
  const tr = document.createElement('tr')
  for (const h of head) {
    const th = document.createElement('th')
    th.textContent = h
    tr.append(th)
  }
  el.append(tr)
  if (rows.length === 0) rows = [[empty, ...head.slice(1).map(() => '')]]
  for (const r of rows) {
    const row = document.createElement('tr')
    for (const c of r) {
      const td = document.createElement('td')
      td.textContent = c === null || c === undefined ? '—' : String(c)
      row.append(td)
    }
    el.append(row)
  }
}

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

provider?.on?.('accountsChanged', () => void refreshWallet())

// ── the signed-in part ──

let routes: WithdrawalRoute[] = []

async function loadPrivate() {
  const results = await Promise.allSettled([loadDeposit(), loadPortfolio(), loadPositions(), loadWithdrawals()])
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

async function loadPortfolio() {
  const [summary, statement] = await Promise.all([api.portfolioSummary(), api.portfolioStatement({ limit: 20 })])
  table(
    $('summary'),
    ['currency', 'free', 'in subaccounts', 'pending withdrawals', 'premium', 'period return'],
    summary.assets.map((a) => [
      a.currency,
      a.freeBalance,
      a.inSubaccounts,
      a.pendingWithdrawals,
      a.income.premium,
      a.periodReturn,
    ]),
    'no balances yet',
  )
  table(
    $('statement'),
    ['when', 'event', 'account', 'amount', 'balance after'],
    statement.rows.flatMap((r) =>
      r.postings.map((p) => [r.occurredAt, r.type, p.account, `${p.amount} ${p.currency}`, p.balanceAfter]),
    ),
    'no events yet',
  )
}

async function loadPositions() {
  const list = await api.positions({ limit: 20 })
  table(
    $('position-list'),
    ['asset', 'side', 'state', 'collateral', 'instrument', 'premium', 'created'],
    list.positions.map((p) => [
      p.asset,
      p.side,
      p.state,
      `${p.collateral} ${p.collateralCurrency}`,
      p.instrument,
      p.premium,
      p.createdAt,
    ]),
    'no positions',
  )
}

async function loadWithdrawals() {
  const [r, list] = await Promise.all([api.withdrawalRoutes(), api.withdrawals({ limit: 20 })])
  routes = r.routes
  table(
    $('withdrawal-routes'),
    ['chain', 'asset', 'min', 'max', 'limits (USD)', 'network fee'],
    routes.map((x) => [
      x.chain,
      x.asset,
      x.minAmount ?? '–',
      x.maxAmount ?? '–',
      `${x.minUsd} – ${x.maxUsd}${x.priceAvailable ? '' : ' (no recent price: unavailable)'}`,
      x.networkFee.available ? `${x.networkFee.estimate ?? '?'} ETH, paid by the platform` : 'unavailable',
    ]),
    'no routes',
  )
  const select = $<HTMLFormElement>('withdrawal-form').elements.namedItem('route') as HTMLSelectElement
  select.replaceChildren(
    ...routes.map((x, i) => {
      const o = document.createElement('option')
      o.value = String(i)
      o.textContent = x.priceAvailable
        ? `${x.asset} on ${x.chain} (${x.minAmount}–${x.maxAmount})`
        : `${x.asset} on ${x.chain} (unavailable: no recent price)`
      o.disabled = !x.priceAvailable
      return o
    }),
  )
  table(
    $('withdrawal-list'),
    ['asset', 'chain', 'amount', 'state', 'destination', 'tx'],
    list.items.map((w) => [w.asset, w.chain, w.amount, w.state, w.destination, w.txHash]),
    'no withdrawals',
  )
}

$('position-form').addEventListener('submit', async (ev) => {
  ev.preventDefault()
  const f = new FormData(ev.target as HTMLFormElement)
  try {
    const p = await api.createPosition(
      { asset: String(f.get('asset')) as 'ETH' | 'BTC', side: 'put', amount: String(f.get('amount')) },
      { idempotencyKey: crypto.randomUUID() },
    )
    say(`Put ${p.id} accepted (${p.state})`, 'ok')
    await loadPositions()
  } catch (e) {
    say(`Position refused: ${describe(e)}`)
  }
})

$('withdrawal-form').addEventListener('submit', async (ev) => {
  ev.preventDefault()
  const f = new FormData(ev.target as HTMLFormElement)
  const route = routes[Number(f.get('route'))]
  if (!route) return
  try {
    const w = await api.requestWithdrawal(
      {
        chain: route.chain as CreateWithdrawalBody['chain'],
        asset: route.asset,
        amount: String(f.get('amount')),
        destination: String(f.get('destination')),
      },
      { idempotencyKey: crypto.randomUUID() },
    )
    say(`Withdrawal ${w.id} requested`, 'ok')
    await loadWithdrawals()
  } catch (e) {
    say(`Withdrawal refused: ${describe(e)}`)
  }
})

// ── public: assets, prices, strategies ──

async function loadAssets() {
  try {
    const { assets } = await api.assets()
    table(
      $('asset-routes'),
      ['asset', 'availability', 'chain', 'token', 'contract', 'min deposit', 'confirmations'],
      assets.flatMap((a) =>
        a.depositRoutes.map((r) => [
          a.symbol,
          a.availability,
          `${r.chain} (${r.chainId})`,
          r.token,
          r.contract ?? 'native',
          r.minDeposit,
          r.confirmations,
        ]),
      ),
      'no deposit routes',
    )
  } catch (e) {
    say(describe(e))
  }
}

const latest = new Map<string, PriceUpdate>()
function renderPrices() {
  table(
    $('price-table'),
    ['asset', 'index', 'mark', 'ATM IV', 'seq', 'at'],
    [...latest.values()].map((u) => [u.asset, u.index, u.mark, u.atmIv, u.seq, u.ts]),
    'waiting for the feed',
  )
}

function startStreams() {
  renderPrices()
  const onPrice = (u: PriceUpdate) => {
    latest.set(u.asset, u)
    renderPrices()
  }
  openPriceStream({
    baseUrl: API_URL,
    assets: ASSETS,
    onSnapshot: onPrice,
    onEvent: onPrice,
    onStatus: (s) => {
      $('prices-status').textContent = s
    },
  })
  const feed = $('strategy-feed')
  const log = (text: string) => {
    const li = document.createElement('li')
    li.textContent = text
    feed.prepend(li)
    while (feed.childElementCount > 100) feed.lastElementChild?.remove()
  }
  openStrategyStream({
    baseUrl: API_URL,
    assets: ASSETS,
    onSnapshot: (s) =>
      log(
        `${s.asset} #${s.seq} state: ${s.strategies.map((x) => `${x.id} ${x.liveCycles} live`).join(', ')}; puts ${s.signals.put}, calls ${s.signals.call}`,
      ),
    onEvent: (e) => log(`${e.asset} #${e.seq} ${e.event}${'strategy' in e ? ` ${e.strategy}` : ''}`),
    onGap: (g) => log(`${g.asset}: missed #${g.expected}…#${g.received - 1}, reloading the state`),
    onStatus: (s) => {
      $('strategies-status').textContent = s
    },
  })
}

void loadAssets()
startStreams()
void refreshWallet()
