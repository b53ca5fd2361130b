import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
// spec 2.4: an account name literal starts with one of the prefixes, right after a quote or backtick
const ACCOUNT_LITERAL = /['"`](user|platform):/

/** The code of a file without its comments (a comment may name an account shape to explain it). */
function code(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1')
}

function sources(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...sources(path))
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name) && !/\.test\.tsx?$/.test(name)) out.push(path)
  }
  return out
}

describe('architecture: account names (spec 2.4)', () => {
  it('no source outside packages/ledger writes an account-name literal', () => {
    const offenders: string[] = []
    for (const top of ['apps', 'packages']) {
      for (const file of sources(join(ROOT, top))) {
        const rel = relative(ROOT, file)
        if (rel.startsWith('packages/ledger/') || rel.split('/').includes('test')) continue
        code(file)
          .split('\n')
          .forEach((line, i) => {
            if (ACCOUNT_LITERAL.test(line)) offenders.push(`${rel}:${i + 1}: ${line.trim()}`)
          })
      }
    }
    expect(offenders).toEqual([])
  })

  it('inside packages/ledger only accounts.ts writes one', () => {
    const offenders = sources(join(ROOT, 'packages/ledger/src'))
      .filter((f) => !f.endsWith('/accounts.ts'))
      .filter((f) => ACCOUNT_LITERAL.test(code(f)))
    expect(offenders.map((f) => relative(ROOT, f))).toEqual([])
  })

  it('the pattern catches a literal', () => {
    expect(ACCOUNT_LITERAL.test("const a = 'platform:fee_revenue'")).toBe(true)
    expect(ACCOUNT_LITERAL.test(['const a = `user:', '{id}:transit`'].join('$'))).toBe(true)
    expect(ACCOUNT_LITERAL.test("const userId = 'abc'")).toBe(false)
  })
})
