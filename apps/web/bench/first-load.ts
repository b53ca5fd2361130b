/**
 * What a browser downloads to show the console the first time (docs/console.md "Size"): index.html
 * and every file it names (the entry script, its stylesheet, the chunks it preloads), gzipped as a
 * server would send them. What loads later on demand (the charts' uPlot) is listed apart. The bar
 * is 150 kB gzipped for the first load (apps/web/test/first-load.test.ts).
 *
 *   pnpm --filter @wh/web bench      # builds into a temporary folder and prints the table
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { build } from 'vite'

export const FIRST_LOAD_BUDGET_BYTES = 150_000

export interface LoadedFile {
  readonly file: string
  readonly bytes: number
  readonly gzipBytes: number
}

export interface FirstLoad {
  readonly first: readonly LoadedFile[]
  readonly later: readonly LoadedFile[]
  readonly firstGzipBytes: number
}

const sizeOf = (dir: string, file: string): LoadedFile => {
  const body = readFileSync(join(dir, file))
  return { file, bytes: body.length, gzipBytes: gzipSync(body).length }
}

/** The first load of a built console in `dir`, and the files loaded later. */
export function measureFirstLoad(dir: string): FirstLoad {
  const html = readFileSync(join(dir, 'index.html'), 'utf8')
  const named = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((m) => m[1] as string)
  const first = ['index.html', ...new Set(named)].map((f) => sizeOf(dir, f))
  const later = readdirSync(join(dir, 'assets'))
    .map((f) => `assets/${f}`)
    .filter((f) => !named.includes(f))
    .map((f) => sizeOf(dir, f))
  return { first, later, firstGzipBytes: first.reduce((n, f) => n + f.gzipBytes, 0) }
}

/** `vite build` of the console into a temporary folder; the caller removes it. */
export async function buildInto(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'wh-web-size-'))
  await build({
    configFile: join(import.meta.dirname, '../vite.config.ts'),
    logLevel: 'warn',
    mode: 'production',
    build: { outDir: dir, emptyOutDir: true },
  })
  return dir
}

const kB = (n: number) => `${(n / 1000).toFixed(1)} kB`

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = await buildInto()
  try {
    const m = measureFirstLoad(dir)
    console.log('| file | loaded | size | gzip |\n| --- | --- | ---: | ---: |')
    for (const f of m.first) console.log(`| ${f.file} | first | ${kB(f.bytes)} | ${kB(f.gzipBytes)} |`)
    for (const f of m.later) console.log(`| ${f.file} | on demand | ${kB(f.bytes)} | ${kB(f.gzipBytes)} |`)
    console.log(`\nfirst load: ${kB(m.firstGzipBytes)} gzipped (budget ${kB(FIRST_LOAD_BUDGET_BYTES)})`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
