/**
 * The statement export: CSV pages fetched one after the other, each asked with the cursor the
 * previous one gave in `x-next-cursor`, until a page comes without one. The pages are joined into
 * one file with the header line once.
 */

export interface CsvPage {
  csv: string
  nextCursor: string | null
}

export interface CollectedCsv {
  csv: string
  pages: number
  /** data lines (postings), the header apart */
  lines: number
}

/** A statement has far fewer pages than this; a server that never ends its cursor chain is an error. */
export const MAX_EXPORT_PAGES = 10_000

/**
 * Fetches every page through `fetchPage(cursor)` (undefined for the first) and joins them.
 * `onPage` hears each page's number as it arrives (for a progress line).
 */
export async function collectCsv(
  fetchPage: (cursor: string | undefined) => Promise<CsvPage>,
  onPage: (pages: number) => void = () => {},
): Promise<CollectedCsv> {
  let header: string | undefined
  const lines: string[] = []
  const seen = new Set<string>()
  let cursor: string | undefined
  let pages = 0
  do {
    if (pages >= MAX_EXPORT_PAGES) throw new Error(`the export stopped after ${MAX_EXPORT_PAGES} pages`)
    const page = await fetchPage(cursor)
    pages++
    onPage(pages)
    const [first = '', ...rest] = page.csv.split('\n').filter((l) => l !== '')
    header ??= first
    if (first !== header) throw new Error(`page ${pages} of the export has another header: ${first}`)
    lines.push(...rest)
    cursor = page.nextCursor ?? undefined
    if (cursor !== undefined) {
      if (seen.has(cursor)) throw new Error('the statement handed the same cursor twice')
      seen.add(cursor)
    }
  } while (cursor !== undefined)
  return { csv: `${[header ?? '', ...lines].join('\n')}\n`, pages, lines: lines.length }
}
