import { describe, expect, it } from 'vitest'
import { findCycles, moduleSpecifiers, packageGraph, resolveExport, resolveRelative } from './import-graph'

const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges))

describe('findCycles', () => {
  it('a directed acyclic graph has none, shared targets included', () => {
    expect(findCycles(graph({ a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }))).toEqual([])
  })

  it('a cycle comes back as the files on it, and the files outside it do not', () => {
    const g = graph({ a: ['b'], b: ['c'], c: ['a', 'd'], d: ['e'], e: [], x: ['a'] })
    expect(findCycles(g)).toEqual([['a', 'b', 'c']])
  })

  it('two cycles come back as two, sorted, and a file importing itself is one', () => {
    const g = graph({ z: ['y'], y: ['z'], m: ['n'], n: ['m', 'z'], s: ['s'] })
    expect(findCycles(g)).toEqual([['m', 'n'], ['s'], ['y', 'z']])
  })

  it('an edge to a node outside the graph is no cycle and no failure', () => {
    expect(findCycles(graph({ a: ['outside'] }))).toEqual([])
  })

  it('a chain far longer than the call stack allows is walked without overflowing', () => {
    const n = 50_000
    const edges: Record<string, string[]> = {}
    for (let i = 0; i < n; i++) edges[`f${i}`] = i + 1 < n ? [`f${i + 1}`] : ['f0']
    const cycles = findCycles(graph(edges))
    expect(cycles).toHaveLength(1)
    expect(cycles[0]).toHaveLength(n)
  })
})

describe('moduleSpecifiers', () => {
  it('reads imports, type imports, re-exports, side-effect and dynamic imports, and not comments', () => {
    const text = [
      `import { a } from './a'`,
      `import type { B } from "./b"`,
      `import { type C, d } from '../c'`,
      `export { e } from './e'`,
      `export type { F } from './f'`,
      `export * from './g'`,
      `export * as h from './h'`,
      `import './side-effect'`,
      `const lazy = () => import('./lazy')`,
      `let t: import('./type-only').T`,
      `import x = require('./required')`,
      `import { viem } from 'viem'`,
      `// import { gone } from './commented'`,
      `const s = "import { no } from './in-a-string'"`,
    ].join('\n')
    expect(moduleSpecifiers('f.ts', text)).toEqual([
      './a',
      './b',
      '../c',
      './e',
      './f',
      './g',
      './h',
      './side-effect',
      './lazy',
      './type-only',
      './required',
      'viem',
    ])
  })

  it('reads a .tsx file with JSX in it', () => {
    expect(moduleSpecifiers('p.tsx', `import { A } from './a'\nexport const P = () => <A x={1} />`)).toEqual(['./a'])
  })
})

describe('resolveRelative', () => {
  const files = new Set(['/r/src/a.ts', '/r/src/dir/index.ts', '/r/src/web/page.tsx', '/r/src/data.json'])
  const exists = (p: string) => files.has(p)

  it('finds x.ts, x.tsx, a .js written for a .ts, and a folder index', () => {
    expect(resolveRelative('/r/src/b.ts', './a', exists)).toBe('/r/src/a.ts')
    expect(resolveRelative('/r/src/b.ts', './a.js', exists)).toBe('/r/src/a.ts')
    expect(resolveRelative('/r/src/b.ts', './dir', exists)).toBe('/r/src/dir/index.ts')
    expect(resolveRelative('/r/src/dir/x.ts', '..', exists)).toBeUndefined()
    expect(resolveRelative('/r/src/dir/x.ts', '../web/page', exists)).toBe('/r/src/web/page.tsx')
    expect(resolveRelative('/r/src/dir/x.ts', './index', exists)).toBe('/r/src/dir/index.ts')
  })

  it('leaves bare specifiers, missing files and non-source files alone', () => {
    expect(resolveRelative('/r/src/b.ts', 'viem', exists)).toBeUndefined()
    expect(resolveRelative('/r/src/b.ts', './missing', exists)).toBeUndefined()
    expect(resolveRelative('/r/src/b.ts', './data.json', exists)).toBeUndefined()
  })
})

describe('packageGraph', () => {
  it('joins declared dependencies of every kind with undeclared imports, and finds the cycle they make', () => {
    const g = packageGraph([
      { name: '@wh/market', manifest: { dependencies: { '@wh/wallet': 'workspace:*', viem: '^2' } } },
      { name: '@wh/wallet', manifest: { devDependencies: { '@wh/core': 'workspace:*' } }, imports: ['@wh/market/x'] },
      { name: '@wh/core', manifest: {}, imports: ['@wh/core', 'viem'] },
    ])
    expect(g).toEqual(graph({ '@wh/market': ['@wh/wallet'], '@wh/wallet': ['@wh/core', '@wh/market'], '@wh/core': [] }))
    expect(findCycles(g)).toEqual([['@wh/market', '@wh/wallet']])
  })

  it('a package name that prefixes another is not confused with it', () => {
    const g = packageGraph([
      { name: '@wh/api', manifest: { dependencies: { '@wh/api-schemas': 'workspace:*' } } },
      { name: '@wh/api-schemas', manifest: {} },
    ])
    expect(g.get('@wh/api')).toEqual(['@wh/api-schemas'])
    expect(findCycles(g)).toEqual([])
  })
})

describe('resolveExport', () => {
  it('answers exact keys, star patterns and conditions, and nothing for what is not exported', () => {
    const exports = { '.': './src/index.ts', './*': './src/*.ts', './x': { import: './src/x.ts' } }
    expect(resolveExport(exports, '.')).toBe('./src/index.ts')
    expect(resolveExport(exports, './chains')).toBe('./src/chains.ts')
    expect(resolveExport(exports, './x')).toBe('./src/x.ts')
    expect(resolveExport({ '.': './src/index.ts' }, './chains')).toBeUndefined()
    expect(resolveExport('./src/index.ts', '.')).toBe('./src/index.ts')
  })
})
