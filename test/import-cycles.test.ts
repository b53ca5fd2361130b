/**
 * No import cycles (docs/architecture.md "Checks that keep the shape"), at two levels:
 * - between files: every relative import and re-export of the source (`import type` and
 *   `export … from` included) and every import of a file's own package by name, resolved to the
 *   file it lands on; no file may reach itself again;
 * - between workspace packages: what each manifest declares and what each source imports.
 *
 * The source is every TypeScript file of apps/*, packages/*, tools/* and scripts/ (src, scripts,
 * bench, demo…), without tests (`test/` folders, `*.test.ts`), declaration files and generated files
 * (`*.gen.ts`, which import nothing of ours).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findCycles, moduleSpecifiers, packageGraph, resolveExport, resolveRelative } from './import-graph'

const ROOT = join(import.meta.dirname, '..')
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'test', 'tests', '__tests__', 'coverage'])

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    if (SKIPPED_FOLDERS.has(name) || name.startsWith('.')) continue
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p))
    else if (/\.(m?ts|tsx)$/.test(name) && !/\.(test|spec|d|gen)\.(m?ts|tsx)$/.test(name)) out.push(p)
  }
  return out
}

interface Workspace {
  readonly dir: string
  readonly name: string
  readonly manifest: Record<string, unknown>
  readonly files: string[]
}

const workspaces: Workspace[] = ['apps', 'packages', 'tools'].flatMap((top) =>
  readdirSync(join(ROOT, top))
    .map((name) => join(ROOT, top, name))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>
      return { dir, name: manifest['name'] as string, manifest, files: sourceFiles(dir) }
    }),
)
const rootScripts = sourceFiles(join(ROOT, 'scripts'))
const sources = new Set([...workspaces.flatMap((w) => w.files), ...rootScripts])
const specifiersOf = new Map([...sources].map((f) => [f, moduleSpecifiers(f, readFileSync(f, 'utf8'))]))

/** `@wh/x` and `@wh/x/sub` written inside @wh/x: Node's self-reference, through the exports map */
function resolveSelf(w: Workspace, specifier: string): string | undefined {
  if (specifier !== w.name && !specifier.startsWith(`${w.name}/`)) return undefined
  const target = resolveExport(w.manifest['exports'], `.${specifier.slice(w.name.length)}`)
  return target === undefined ? undefined : join(w.dir, target)
}

function fileGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  const owner = (file: string) => workspaces.find((w) => file.startsWith(`${w.dir}/`))
  for (const [file, specifiers] of specifiersOf) {
    const w = owner(file)
    const targets = specifiers
      .map((s) => resolveRelative(file, s, (p) => sources.has(p)) ?? (w && resolveSelf(w, s)))
      .filter((t): t is string => t !== undefined && sources.has(t))
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

describe('import cycles', () => {
  it('the scan sees the source it is meant to see', () => {
    // a scan that found nothing would pass for the wrong reason
    const seen = (path: string) => sources.has(join(ROOT, path))
    expect(seen('apps/api/src/server.ts')).toBe(true)
    expect(seen('apps/web/src/app.tsx')).toBe(true)
    expect(seen('packages/ledger/src/accounts.ts')).toBe(true)
    expect(seen('tools/derive-simulator/src/main.ts')).toBe(true)
    expect([...sources].some((f) => /\.test\.ts$|\.gen\.ts$|\/test\//.test(relative(ROOT, f)))).toBe(false)
    const edges = [...fileGraph().values()].reduce((n, targets) => n + targets.length, 0)
    expect(edges).toBeGreaterThan(sources.size)
  })

  it('no source file imports itself again through a chain of relative imports', () => {
    const cycles = findCycles(fileGraph()).map((c) => c.map((f) => relative(ROOT, f)).join('\n  '))
    expect(cycles, `${cycles.length} import cycle(s):\n  ${cycles.join('\n\n  ')}`).toEqual([])
  })

  it('the workspace packages depend on each other without a cycle (manifests and imports alike)', () => {
    const graph = packageGraph(
      workspaces.map((w) => ({
        name: w.name,
        manifest: w.manifest,
        imports: w.files.flatMap((f) => specifiersOf.get(f) ?? []).filter((s) => !s.startsWith('.')),
      })),
    )
    expect(graph.size).toBe(workspaces.length)
    expect(findCycles(graph).map((c) => c.join(' <-> '))).toEqual([])
  })
})
