/**
 * The statement (GET /portfolio/statement): a page at a time, "Show more" asks the next one with
 * the cursor the last gave; "Export CSV" downloads the whole statement, page after page, following
 * `x-next-cursor` (./csv). Both ask pages of the size chosen in "Rows per page".
 */
import type { ApiClient, StatementResponse } from '@wh/client'
import { collectCsv } from './csv'
import { $, amount, type Cell, describe, say, table, time } from './dom'
import { accountLabel, eventLabel } from './format'

type Row = StatementResponse['rows'][number]

export interface StatementSection {
  /** back to the first page (after sign-in, a refresh, another page size) */
  reload(): Promise<void>
}

export function statementSection(api: ApiClient): StatementSection {
  let rows: Row[] = []
  let cursor: string | null = null
  /** a reload started after a page was asked makes that page stale */
  let generation = 0
  const more = $<HTMLButtonElement>('statement-more')
  const exportButton = $<HTMLButtonElement>('statement-csv')
  const pageSize = () => Number($<HTMLSelectElement>('statement-page-size').value)

  function render() {
    const cells: Cell[][] = rows.flatMap((r) =>
      r.postings.map((p) => [
        time(r.occurredAt),
        eventLabel(r.type),
        accountLabel(p.account),
        amount(p.amount, p.currency),
        amount(p.balanceAfter, p.currency),
      ]),
    )
    table($('statement'), ['When', 'Event', 'Account', 'Amount', 'Balance after'], cells, 'no events yet')
    more.hidden = cursor === null
    const n = `${rows.length} ${rows.length === 1 ? 'event' : 'events'}`
    $('statement-status').textContent = cursor === null ? `${n}: the whole statement.` : `${n} shown; there are more.`
  }

  async function load(after: string | undefined) {
    const g = generation
    const page = await api.portfolioStatement({ limit: pageSize(), ...(after && { cursor: after }) })
    if (g !== generation) return
    rows = after ? [...rows, ...page.rows] : page.rows
    cursor = page.nextCursor
    render()
  }

  more.addEventListener('click', async () => {
    if (cursor === null) return
    more.disabled = true
    try {
      await load(cursor)
    } catch (e) {
      say(`Could not load more of the statement: ${describe(e)}`)
    } finally {
      more.disabled = false
    }
  })

  $('statement-page-size').addEventListener('change', () => {
    generation++
    load(undefined).catch((e) => say(describe(e)))
  })

  exportButton.addEventListener('click', async () => {
    exportButton.disabled = true
    try {
      await exportCsv(api, pageSize())
    } finally {
      exportButton.disabled = false
    }
  })

  return {
    async reload() {
      generation++
      rows = []
      cursor = null
      await load(undefined)
    },
  }
}

/** The whole statement as one CSV file, `limit` events a request, saved as a download. */
async function exportCsv(api: ApiClient, limit: number) {
  const status = $('statement-export-status')
  try {
    const r = await collectCsv(
      (c) => api.portfolioStatementCsv({ limit, ...(c && { cursor: c }) }),
      (n) => {
        status.textContent = `Exporting: page ${n}…`
      },
    )
    const name = `statement-${new Date().toISOString().slice(0, 10)}.csv`
    download(name, r.csv)
    const lines = `${r.lines} ${r.lines === 1 ? 'line' : 'lines'}`
    status.textContent = `Exported ${lines} from ${r.pages} ${r.pages === 1 ? 'page' : 'pages'} to ${name}.`
  } catch (e) {
    status.textContent = ''
    say(`Export failed: ${describe(e)}`)
  }
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  a.hidden = true
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}
