/**
 * The console's frame: the wallet and session bar, the pages' navigation, the page, the live
 * notices and the streams' state. Pages are ./pages/*; the account's data is state/account.ts.
 */
import { useEffect, useRef } from 'preact/hooks'
import { errorText } from './errors'
import { DepositPage } from './pages/deposit'
import { MarketPage } from './pages/market'
import { OverviewPage } from './pages/overview'
import { ProofPage } from './pages/proof'
import { StatementPage } from './pages/statement'
import { WheelPage } from './pages/wheel'
import { WithdrawPage } from './pages/withdraw'
import { hrefOf, PAGES, type PageId, page, titleOf } from './router'
import { address, connectWallet, hasWallet, signedIn, signInWithWallet, signOut } from './session'
import { streamStatus } from './state/account'
import { priceStatus } from './state/market'
import { dismiss, notices, notify } from './state/notices'
import { useAction } from './ui/action'

const BODY: Readonly<Record<PageId, () => preact.JSX.Element>> = {
  overview: OverviewPage,
  wheel: WheelPage,
  deposit: DepositPage,
  withdraw: WithdrawPage,
  statement: StatementPage,
  proof: ProofPage,
  market: MarketPage,
}

const shortAddress = (a: string) => `${a.slice(0, 6)}…${a.slice(-4)}`

function WalletBar() {
  const [outcome, act] = useAction()
  const a = address.value
  const state = signedIn.value ? 'signed-in' : 'none'
  return (
    <div class="wallet">
      <span class="who" data-testid="wallet-address" data-address={a ?? ''} title={a}>
        {a ? shortAddress(a) : hasWallet ? 'No wallet connected' : 'No wallet in this browser'}
      </span>
      <span class="sr-only" data-testid="session-status" data-state={state}>
        {signedIn.value ? `Signed in as ${a}` : a ? `Not signed in as ${a}` : 'Not signed in'}
      </span>
      {hasWallet && !a && (
        <button
          type="button"
          onClick={() =>
            act(async () => {
              await connectWallet()
              return ''
            }, 'Connecting…')
          }
        >
          Connect wallet
        </button>
      )}
      {a && !signedIn.value && (
        <button
          type="button"
          class="primary"
          onClick={() =>
            act(async () => {
              await signInWithWallet()
              return ''
            }, 'Sign the message in your wallet…')
          }
        >
          Sign in
        </button>
      )}
      {signedIn.value && (
        <button type="button" class="quiet" onClick={signOut}>
          Sign out
        </button>
      )}
      {outcome?.kind !== 'ok' && outcome?.text && (
        <span class={`result ${outcome.kind}`} role="status">
          {outcome.text}
        </span>
      )}
    </div>
  )
}

function Toasts() {
  return (
    <div class="toasts" role="status" aria-live="polite" data-testid="notices">
      {notices.value.map((n) => (
        <p key={n.id} class={`toast ${n.kind}`}>
          <span>{n.text}</span>
          <button type="button" class="quiet" aria-label="Dismiss" onClick={() => dismiss(n.id)}>
            ×
          </button>
        </p>
      ))}
    </div>
  )
}

export function App() {
  const main = useRef<HTMLElement>(null)
  const id = page.value
  useEffect(() => {
    document.title = `${titleOf(id)} · Wheelhouse`
    // a new page: its heading is where a keyboard or screen-reader user continues
    main.current?.querySelector('h1')?.focus()
  }, [id])
  const Body = BODY[id]
  return (
    <>
      <header class="top">
        <a class="brand" href={hrefOf('overview')}>
          Wheelhouse
        </a>
        <WalletBar />
      </header>
      <nav class="tabs" aria-label="Pages">
        <ul>
          {PAGES.map((p) => (
            <li key={p.id}>
              <a href={hrefOf(p.id)} aria-current={id === p.id ? 'page' : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main ref={main} data-page={id}>
        <h1 tabIndex={-1}>{titleOf(id)}</h1>
        <Body />
      </main>
      <Toasts />
      <footer class="status">
        <span data-testid="account-stream-status">Account: {signedIn.value ? streamStatus.value : 'signed out'}</span>
        <span data-testid="prices-status">Prices: {priceStatus.value}</span>
      </footer>
    </>
  )
}

addEventListener('unhandledrejection', (e) => notify(errorText(e.reason), 'error'))
