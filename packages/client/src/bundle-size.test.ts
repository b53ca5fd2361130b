/**
 * What the client adds to a browser page, bundled as an app's build would (Vite: Rolldown,
 * minified, tree-shaken), then gzipped. With the `siwe` library the sign-in path weighed 671 kB
 * minified, 207 kB gzipped (ethers and a parser inside); through viem's SIWE helper about 16 kB
 * and 6 kB (docs/architecture.md "@wh/client"). The budgets leave room for growth, not for a
 * library of that kind coming back.
 */
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { build, type Rolldown } from 'vite'
import { describe, expect, it } from 'vitest'

const INDEX = JSON.stringify(join(import.meta.dirname, 'index.ts'))

interface Bundle {
  minified: number
  gzipped: number
  packages: string[]
}

async function bundle(entry: string): Promise<Bundle> {
  const result = (await build({
    configFile: false,
    logLevel: 'silent',
    root: import.meta.dirname,
    plugins: [
      {
        name: 'entry',
        resolveId: (id) => (id === 'entry' ? '\0entry' : undefined),
        load: (id) => (id === '\0entry' ? entry : undefined),
      },
    ],
    build: {
      write: false,
      target: 'es2022',
      minify: true,
      rolldownOptions: { input: 'entry', preserveEntrySignatures: 'strict' },
    },
  })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[]
  const chunks = [result].flat().flatMap((o) => o.output.filter((c) => c.type === 'chunk'))
  const modules = chunks.flatMap((c) => Object.keys(c.modules))
  return {
    minified: chunks.reduce((n, c) => n + Buffer.byteLength(c.code), 0),
    gzipped: chunks.reduce((n, c) => n + gzipSync(c.code).length, 0),
    packages: [...new Set(modules.flatMap((m) => /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(m)?.[1] ?? []))],
  }
}

describe('the browser bundle of @wh/client', () => {
  it('the sign-in path (signIn and the token store) stays a few kB: viem helpers, no siwe, no ethers', async () => {
    const b = await bundle(`export { signIn, signInMessage, TokenStore } from ${INDEX}`)
    expect(b.packages.filter((p) => /siwe|ethers|apg-js/.test(p))).toEqual([])
    expect(b.packages).toContain('viem')
    expect(b.gzipped, `${b.minified} B minified, ${b.gzipped} B gzipped`).toBeLessThan(12_000)
  })

  it('everything it exports stays small too', async () => {
    const b = await bundle(`export * from ${INDEX}`)
    expect(b.gzipped, `${b.minified} B minified, ${b.gzipped} B gzipped`).toBeLessThan(20_000)
  })
})
