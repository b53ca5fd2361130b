/**
 * The console's first load stays within its budget (docs/console.md "Size"): a production build's
 * index.html and every file it names, gzipped, at most 150 kB; the charts (uPlot) are not in it.
 */
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildInto, FIRST_LOAD_BUDGET_BYTES, type FirstLoad, measureFirstLoad } from '../bench/first-load'

describe("the console's first load", () => {
  let dir: string
  let m: FirstLoad

  beforeAll(async () => {
    dir = await buildInto()
    m = measureFirstLoad(dir)
  }, 120_000)
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('is at most 150 kB gzipped, index.html, its script and its stylesheet', () => {
    expect(m.first.map((f) => f.file.replace(/-[\w-]+\./, '.'))).toEqual([
      'index.html',
      'assets/index.js',
      'assets/index.css',
    ])
    expect(m.firstGzipBytes, JSON.stringify(m.first)).toBeLessThanOrEqual(FIRST_LOAD_BUDGET_BYTES)
  })

  it('leaves the charts to load on first use', () => {
    expect(m.later.some((f) => /uPlot/.test(f.file))).toBe(true)
    expect(m.first.some((f) => /uPlot/.test(f.file))).toBe(false)
  })
})
