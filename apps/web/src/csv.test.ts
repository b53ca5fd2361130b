import { describe, expect, it } from 'vitest'
import { type CsvPage, collectCsv } from './csv'

const HEADER = 'event_id,type,occurred_at,account,currency,amount,balance_after'

/** A statement served in pages of `size` lines; the cursor is the next line's index, as text. */
function pagesOf(lines: string[], size: number) {
  const asked: (string | undefined)[] = []
  const fetchPage = async (cursor: string | undefined): Promise<CsvPage> => {
    asked.push(cursor)
    const start = cursor === undefined ? 0 : Number(cursor)
    const end = start + size
    return {
      csv: `${[HEADER, ...lines.slice(start, end)].join('\n')}\n`,
      nextCursor: end < lines.length ? String(end) : null,
    }
  }
  return { fetchPage, asked }
}

describe('collectCsv', () => {
  const lines = Array.from({ length: 23 }, (_, i) => `e${i},deposit_detected,2026-01-30T00:00:00.000Z,a,USDC,1.0,${i}`)

  it('follows the cursor to the last page and keeps the header once', async () => {
    const { fetchPage, asked } = pagesOf(lines, 10)
    const heard: number[] = []
    const r = await collectCsv(fetchPage, (n) => heard.push(n))
    expect(asked).toEqual([undefined, '10', '20'])
    expect(heard).toEqual([1, 2, 3])
    expect(r).toEqual({ csv: `${[HEADER, ...lines].join('\n')}\n`, pages: 3, lines: 23 })
  })

  it('an empty statement is the header alone', async () => {
    const r = await collectCsv(pagesOf([], 10).fetchPage)
    expect(r).toEqual({ csv: `${HEADER}\n`, pages: 1, lines: 0 })
  })

  it('refuses a cursor chain that loops, and pages that disagree on the header', async () => {
    await expect(collectCsv(async () => ({ csv: `${HEADER}\nx\n`, nextCursor: 'same' }))).rejects.toThrow(
      /same cursor twice/,
    )
    let n = 0
    const fetchPage = async (): Promise<CsvPage> => ({
      csv: n++ === 0 ? `${HEADER}\n` : 'other\n',
      nextCursor: n < 2 ? 'c' : null,
    })
    await expect(collectCsv(fetchPage)).rejects.toThrow(/another header/)
  })
})
