/**
 * Statement: the journal's events with their postings, each account named as a person reads it
 * (the API's `label`), a page at a time ("Show more" follows the cursor), exported whole as CSV
 * (../csv.ts follows x-next-cursor); above it, how the balances add up, so the statement's
 * "Platform balance" agrees with the overview's free balance plus what waits to be withdrawn or to
 * fund a position. It reads its first page again when the account stream says money moved.
 */
import type { StatementResponse } from '@wh/client'
import { useEffect, useState } from 'preact/hooks'
import { collectCsv } from '../csv'
import { errorText } from '../errors'
import { api } from '../session'
import { statementVersion, summary } from '../state/account'
import { Result, useAction } from '../ui/action'
import { Card, Loading, ScrollRegion, SignedIn } from '../ui/common'
import { Amount, Time } from '../ui/values'

type Row = StatementResponse['rows'][number]
const PAGE_SIZES = [10, 25, 50, 100]
const eventLabel = (type: string) => type.replaceAll('_', ' ')

function HowItAddsUp() {
  const s = summary.value
  if (!s) return <Loading what="balances" />
  return (
    <ScrollRegion label="How your balances add up">
      <table data-testid="reconcile">
        <thead>
          <tr>
            <th scope="col">Currency</th>
            <th scope="col">Free to use</th>
            <th scope="col">Pending withdrawals</th>
            <th scope="col">Pending fundings</th>
            <th scope="col">At the exchange</th>
          </tr>
        </thead>
        <tbody>
          {s.assets.map((a) => (
            <tr key={a.currency}>
              <th scope="row">{a.currency}</th>
              <td>
                <Amount value={a.freeBalance} currency={a.currency} />
              </td>
              <td>
                <Amount value={a.pendingWithdrawals} currency={a.currency} />
              </td>
              <td>
                <Amount value={a.pendingFundings} currency={a.currency} />
              </td>
              <td>
                <Amount value={a.inSubaccounts} currency={a.currency} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  )
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }))
  const a = Object.assign(document.createElement('a'), { href: url, download: name, hidden: true })
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

function Export({ limit }: { limit: number }) {
  const [outcome, act] = useAction()
  const run = () =>
    act(async () => {
      const r = await collectCsv((c) => api.portfolioStatementCsv({ limit, ...(c && { cursor: c }) }))
      const name = `statement-${new Date().toISOString().slice(0, 10)}.csv`
      download(name, r.csv)
      return `Exported ${r.lines} ${r.lines === 1 ? 'line' : 'lines'} from ${r.pages} ${r.pages === 1 ? 'page' : 'pages'} to ${name}.`
    }, 'Exporting…')
  return (
    <>
      <button type="button" onClick={run}>
        Export CSV
      </button>
      <Result outcome={outcome} testId="export-status" />
    </>
  )
}

function Postings({ rows }: { rows: readonly Row[] }) {
  return (
    <table class="stack" data-testid="statement">
      <caption class="sr-only">Your ledger events, oldest first, with the balance after each</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Event</th>
          <th scope="col">Account</th>
          <th scope="col">Amount</th>
          <th scope="col">Balance after</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 && (
          <tr>
            <td colSpan={5} class="muted">
              No events yet.
            </td>
          </tr>
        )}
        {rows.flatMap((r) =>
          r.postings.map((p) => (
            <tr key={`${r.eventId}:${p.account}:${p.currency}`}>
              <td data-label="When">
                <Time iso={r.occurredAt} />
              </td>
              <td data-label="Event">{eventLabel(r.type)}</td>
              <td data-label="Account">{p.label}</td>
              <td data-label="Amount">
                <Amount value={p.amount} currency={p.currency} signed />
              </td>
              <td data-label="Balance after">
                <Amount value={p.balanceAfter} currency={p.currency} />
              </td>
            </tr>
          )),
        )}
      </tbody>
    </table>
  )
}

function Statement() {
  const [limit, setLimit] = useState(25)
  const [rows, setRows] = useState<readonly Row[] | undefined>(undefined)
  const [cursor, setCursor] = useState<string | null>(null)
  const [error, setError] = useState<string | undefined>(undefined)
  const version = statementVersion.value
  useEffect(() => {
    let current = true
    api.portfolioStatement({ limit }).then(
      (p) => {
        if (!current) return
        setRows(p.rows)
        setCursor(p.nextCursor)
        setError(undefined)
      },
      (e) => current && setError(errorText(e)),
    )
    return () => {
      current = false
    }
  }, [limit, version])
  const more = async () => {
    if (!cursor) return
    try {
      const p = await api.portfolioStatement({ limit, cursor })
      setRows([...(rows ?? []), ...p.rows])
      setCursor(p.nextCursor)
    } catch (e) {
      setError(errorText(e))
    }
  }
  if (!rows) return error ? <p role="alert">{error}</p> : <Loading what="your statement" />
  const n = `${rows.length} ${rows.length === 1 ? 'event' : 'events'}`
  return (
    <>
      <div class="toolbar">
        <label for="page-size">Rows per page</label>{' '}
        <select id="page-size" value={limit} onChange={(e) => setLimit(Number((e.target as HTMLSelectElement).value))}>
          {PAGE_SIZES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>{' '}
        <Export limit={limit} />
      </div>
      <ScrollRegion label="Statement">
        <Postings rows={rows} />
      </ScrollRegion>
      <p>
        <span data-testid="statement-status">
          {cursor ? `${n} shown; there are more.` : `${n}: the whole statement.`}
        </span>{' '}
        {cursor && (
          <button type="button" onClick={more}>
            Show more
          </button>
        )}
      </p>
      {error && <p role="alert">{error}</p>}
    </>
  )
}

export function StatementPage() {
  return (
    <SignedIn what="Your statement">
      <div class="grid">
        <Card title="How your balances add up" id="statement-reconcile" wide>
          <p class="muted small">
            “Platform balance” in the statement is what the platform holds for you: free to use, plus withdrawals
            waiting to be sent, plus fundings on their way to the exchange. What is at the exchange shows as your
            subaccounts.
          </p>
          <HowItAddsUp />
        </Card>
        <Card title="Statement" id="statement-card" wide>
          <Statement />
        </Card>
      </div>
    </SignedIn>
  )
}
