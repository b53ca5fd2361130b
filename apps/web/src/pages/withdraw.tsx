/**
 * Withdraw: a route (chain and asset) with its fee and limits, the amount and the destination; the
 * route chosen is kept (this tab, across reloads) and stays chosen after a request. Then each
 * withdrawal's progress to sent and confirmed, with the transaction's explorer link, live.
 */
import { signal } from '@preact/signals'
import type { CreateWithdrawalBody, WithdrawalItem, WithdrawalRoute } from '@wh/client'
import { useEffect, useState } from 'preact/hooks'
import { sentenceOf } from '../errors'
import { formatAmount } from '../format'
import { api } from '../session'
import { refresh, summary, withdrawalRoutes, withdrawals } from '../state/account'
import { Result, useAction } from '../ui/action'
import { Card, Loading, SignedIn, Steps } from '../ui/common'
import { Amount, Time } from '../ui/values'

/** Block explorers of the public chains, by chain id (a local or unknown chain has none: the hash is shown). */
const EXPLORERS: Readonly<Record<number, string>> = {
  1: 'https://etherscan.io',
  10: 'https://optimistic.etherscan.io',
  8453: 'https://basescan.org',
  42161: 'https://arbiscan.io',
}
const ROUTE_KEY = 'wheelhouse.withdraw-route'
const keyOf = (r: Pick<WithdrawalRoute, 'chain' | 'asset'>) => `${r.chain}:${r.asset}`
/** the route the user chose: kept for this tab, so a request, a refresh or a reload leaves it chosen */
const chosen = signal<string | undefined>(sessionStorage.getItem(ROUTE_KEY) ?? undefined)

export function explorerTxUrl(chainId: number | undefined, txHash: string): string | undefined {
  const base = chainId === undefined ? undefined : EXPLORERS[chainId]
  return base ? `${base}/tx/${txHash}` : undefined
}

function RouteFacts({ r }: { r: WithdrawalRoute }) {
  const free = summary.value?.assets.find((a) => a.currency === r.asset)?.freeBalance
  return (
    <ul class="facts" data-testid="route-facts">
      <li>
        Limits:{' '}
        {r.priceAvailable && r.minAmount && r.maxAmount ? (
          <>
            <Amount value={r.minAmount} currency={r.asset} /> to <Amount value={r.maxAmount} currency={r.asset} /> (
            {formatAmount(r.minUsd, 'USD')} to {formatAmount(r.maxUsd, 'USD')})
          </>
        ) : (
          'unavailable until the price feed gives a recent price'
        )}
      </li>
      <li>
        Network fee:{' '}
        {r.networkFee.available
          ? `about ${r.networkFee.estimate ? formatAmount(r.networkFee.estimate, 'ETH') : 'a little ETH'}, paid by the platform`
          : 'paid by the platform (estimate unavailable)'}
      </li>
      <li>You have {free ? <Amount value={free} currency={r.asset} /> : 'nothing'} free to withdraw.</li>
    </ul>
  )
}

function WithdrawForm() {
  const routes = withdrawalRoutes.value?.routes
  const [amount, setAmount] = useState('')
  const [destination, setDestination] = useState('')
  const [outcome, act] = useAction()
  useEffect(() => {
    if (routes && !routes.some((r) => keyOf(r) === chosen.value)) chosen.value = routes[0] && keyOf(routes[0])
  }, [routes])
  if (!routes) return <Loading what="the routes" />
  const route = routes.find((r) => keyOf(r) === chosen.value)
  const choose = (key: string) => {
    chosen.value = key
    sessionStorage.setItem(ROUTE_KEY, key)
  }
  const submit = (e: Event) => {
    e.preventDefault()
    if (!route) return
    void act(async () => {
      const w = await api.requestWithdrawal(
        { chain: route.chain as CreateWithdrawalBody['chain'], asset: route.asset, amount, destination },
        { idempotencyKey: crypto.randomUUID() },
      )
      refresh(['withdrawals', 'summary'])
      setAmount('')
      return `Withdrawal of ${formatAmount(w.amount, w.asset)} to ${w.destination.slice(0, 10)}… requested: it is sent within a minute or so.`
    }, 'Requesting…')
  }
  return (
    <form class="stack" aria-label="Request a withdrawal" onSubmit={submit}>
      <div class="field">
        <label for="w-route">Route</label>
        <select
          id="w-route"
          name="route"
          value={chosen.value}
          onChange={(e) => choose((e.target as HTMLSelectElement).value)}
        >
          {routes.map((r) => (
            <option key={keyOf(r)} value={keyOf(r)} disabled={!r.priceAvailable}>
              {r.asset} on {r.chain}
              {r.priceAvailable ? '' : ' (unavailable: no recent price)'}
            </option>
          ))}
        </select>
      </div>
      {route && <RouteFacts r={route} />}
      <div class="field">
        <label for="w-amount">Amount{route ? ` (${route.asset})` : ''}</label>
        <input
          id="w-amount"
          name="amount"
          inputMode="decimal"
          required
          pattern="[0-9]+(\.[0-9]+)?"
          value={amount}
          onInput={(e) => setAmount((e.target as HTMLInputElement).value.trim())}
        />
      </div>
      <div class="field">
        <label for="w-destination">To address</label>
        <input
          id="w-destination"
          name="destination"
          required
          pattern="0x[0-9a-fA-F]{40}"
          autoComplete="off"
          spellcheck={false}
          value={destination}
          onInput={(e) => setDestination((e.target as HTMLInputElement).value.trim())}
        />
      </div>
      <button type="submit" class="primary" disabled={!route || outcome?.kind === 'busy'}>
        Request withdrawal
      </button>
      <Result outcome={outcome} testId="withdraw-result" />
    </form>
  )
}

function Progress({ w, chainId }: { w: WithdrawalItem; chainId: number | undefined }) {
  if (w.state === 'failed')
    return (
      <p class="failed" role="note">
        Failed: {(w.failureCode && sentenceOf(w.failureCode)) ?? w.failureReason ?? 'no reason given.'}
      </p>
    )
  const url = w.txHash ? explorerTxUrl(chainId, w.txHash) : undefined
  return (
    <>
      <Steps
        label={`Progress of the withdrawal of ${w.amount} ${w.asset}`}
        steps={[
          { name: 'Requested', done: true, at: w.createdAt },
          { name: 'Sent', done: w.txHash !== null },
          { name: 'Confirmed', done: w.state === 'sent', at: w.sentAt },
        ]}
      />
      {w.txHash && (
        <p class="small">
          Transaction{' '}
          {url ? (
            <a href={url} target="_blank" rel="noreferrer" data-testid="tx-link">
              {w.txHash.slice(0, 18)}… on the explorer
            </a>
          ) : (
            <code data-testid="tx-hash">{w.txHash}</code>
          )}
        </p>
      )}
    </>
  )
}

function WithdrawalList() {
  const list = withdrawals.value
  if (!list) return <Loading what="your withdrawals" />
  if (list.items.length === 0) return <p class="muted">No withdrawal yet.</p>
  const chainIds = new Map((withdrawalRoutes.value?.routes ?? []).map((r) => [r.chain, r.chainId]))
  return (
    <ul class="progress-list" data-testid="withdrawals">
      {list.items.map((w) => (
        <li key={w.id} data-state={w.state}>
          <p>
            <strong>
              <Amount value={w.amount} currency={w.asset} />
            </strong>{' '}
            on {w.chain} to <code title={w.destination ?? ''}>{w.destination?.slice(0, 10)}…</code> ·{' '}
            <Time iso={w.createdAt} />
          </p>
          <Progress w={w} chainId={w.chain ? chainIds.get(w.chain) : undefined} />
        </li>
      ))}
    </ul>
  )
}

export function WithdrawPage() {
  useEffect(() => refresh(['routes']), [])
  return (
    <SignedIn what="Withdrawing">
      <div class="grid">
        <Card title="Withdraw" id="withdraw-form">
          <WithdrawForm />
        </Card>
        <Card title="Your withdrawals" id="withdraw-list" wide>
          <WithdrawalList />
        </Card>
      </div>
    </SignedIn>
  )
}
