/**
 * Checks that keep the shape (docs/architecture.md): the folders tell the architecture only while these hold.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..')

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p))
    else if (/\.(ts|mts|js)$/.test(name)) out.push(p)
  }
  return out
}

// tools/*: development programs (the Derive simulator), never part of a production path
const workspaces = ['apps', 'packages', 'tools'].flatMap((top) =>
  readdirSync(join(ROOT, top)).map((name) => ({ top, name, dir: join(ROOT, top, name) })),
)
const serviceSources = workspaces.flatMap((w) => {
  try {
    return sourceFiles(join(w.dir, 'src')).map((file) => ({ ...w, file }))
  } catch {
    return []
  }
})

describe('architecture', () => {
  it('only packages/config reads process.env', () => {
    const offenders = serviceSources
      .filter((s) => !(s.top === 'packages' && s.name === 'config'))
      .filter((s) => /process\.env\b/.test(readFileSync(s.file, 'utf8')))
      .map((s) => relative(ROOT, s.file))
    expect(offenders).toEqual([])
  })

  it('packages never import apps', () => {
    // the app's name ends there: @wh/api-schemas is a package, not the app
    const offenders = serviceSources
      .filter((s) => s.top === 'packages')
      .filter((s) => /from ['"](@wh\/(api|worker|web)['"/]|\.\.\/+.*apps\/)/.test(readFileSync(s.file, 'utf8')))
      .map((s) => relative(ROOT, s.file))
    expect(offenders).toEqual([])
  })

  it('the api never imports the worker, and the worker never imports the api', () => {
    const offenders = serviceSources
      .filter((s) => s.top === 'apps')
      .filter((s) => {
        const text = readFileSync(s.file, 'utf8')
        return s.name === 'api' ? /@wh\/worker|apps\/worker/.test(text) : /@wh\/api|apps\/api/.test(text)
      })
      .map((s) => relative(ROOT, s.file))
    expect(offenders).toEqual([])
  })

  it('no production path reaches the development tools (the Derive simulator)', () => {
    const toolNames = workspaces
      .filter((w) => w.top === 'tools')
      .map((w) => JSON.parse(readFileSync(join(w.dir, 'package.json'), 'utf8')).name as string)
    expect(toolNames).toContain('@wh/derive-simulator')
    // no source of an app or a package imports a tool, by name or by path
    const importers = serviceSources
      .filter((s) => s.top !== 'tools')
      .filter((s) => {
        const text = readFileSync(s.file, 'utf8')
        return (
          toolNames.some((n) => text.includes(`'${n}`) || text.includes(`"${n}`)) || /from ['"][^'"]*tools\//.test(text)
        )
      })
      .map((s) => relative(ROOT, s.file))
    expect(importers).toEqual([])
    // and no app or package depends on one outside its dev dependencies (what `pnpm deploy --prod` ships)
    const dependents = workspaces
      .filter((w) => w.top !== 'tools')
      .filter((w) => {
        const deps = JSON.parse(readFileSync(join(w.dir, 'package.json'), 'utf8')).dependencies ?? {}
        return toolNames.some((n) => n in deps)
      })
      .map((w) => `${w.top}/${w.name}`)
    expect(dependents).toEqual([])
  })

  it('every workspace package has a front door (exports) and a typecheck task', () => {
    for (const w of workspaces) {
      const pkg = JSON.parse(readFileSync(join(w.dir, 'package.json'), 'utf8'))
      if (w.top !== 'apps') expect(pkg.exports?.['.'], pkg.name).toBe('./src/index.ts')
      expect(pkg.scripts?.typecheck, pkg.name).toBeDefined()
    }
  })
})
