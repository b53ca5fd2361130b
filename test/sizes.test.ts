/**
 * Size limits (docs/architecture.md "Size limits"): no function of the service's source over 80
 * lines, no source file over 500. A function is anything with a body (declarations, methods,
 * arrows, closures), measured from its first line to its last, nested closures included: a
 * route plugin whose handlers are closures is as long as all of them together.
 *
 * The source is apps/*\/src, packages/*\/src and tools/*\/src (the development programs, held to the same
 * limits), without tests, declaration files and generated
 * files (`*.gen.ts`). There are no exceptions: the list of what was over the limits when the
 * check came (37 entries) was worked down to none, and nothing joins it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const MAX_FUNCTION_LINES = 80
const MAX_FILE_LINES = 500

const ROOT = join(import.meta.dirname, '..')

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p))
    else if (/\.tsx?$/.test(name) && !/\.(test|d|gen)\.ts$/.test(name)) out.push(p)
  }
  return out
}

function serviceSources(): string[] {
  return ['apps', 'packages', 'tools'].flatMap((top) =>
    readdirSync(join(ROOT, top)).flatMap((name) => {
      const src = join(ROOT, top, name, 'src')
      return statSync(src, { throwIfNoEntry: false })?.isDirectory() ? sourceFiles(src) : []
    }),
  )
}

interface Oversize {
  /** `path` (a file) or `path#name` (a function; `<anonymous>` when it has none) */
  readonly key: string
  readonly lines: number
  readonly line: number
}

function nameOf(node: ts.SignatureDeclaration, file: ts.SourceFile): string {
  if (node.name) return node.name.getText(file)
  const parent = node.parent
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(file)
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(file)
  return '<anonymous>'
}

/** Every file over `maxFile` lines and every function over `maxFunction` in `text`. */
function oversizes(path: string, text: string, maxFunction: number, maxFile: number): Oversize[] {
  const out: Oversize[] = []
  const lineCount = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length
  if (lineCount > maxFile) out.push({ key: path, lines: lineCount, line: 1 })
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && (node as { body?: ts.Node }).body) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line
      const last = file.getLineAndCharacterOfPosition(node.getEnd()).line
      const lines = last - first + 1
      if (lines > maxFunction) out.push({ key: `${path}#${nameOf(node, file)}`, lines, line: first + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return out
}

describe('size limits', () => {
  it('measures functions (closures included) and files', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i}`).join('\n')
    const text = [
      `export function short() {\n${body(10)}\n}`,
      `export const long = () => {\n${body(79)}\n}`,
      `export function outer() {\n  const inner = function () {\n${body(40)}\n  }\n${body(40)}\n}`,
    ].join('\n')
    const found = oversizes('x.ts', text, 80, 150)
    expect(found).toEqual([
      { key: 'x.ts', lines: 177, line: 1 },
      { key: 'x.ts#long', lines: 81, line: 13 },
      { key: 'x.ts#outer', lines: 84, line: 94 },
    ])
  })

  it(`no function over ${MAX_FUNCTION_LINES} lines and no file over ${MAX_FILE_LINES}`, () => {
    const found = serviceSources().flatMap((f) =>
      oversizes(relative(ROOT, f).split('\\').join('/'), readFileSync(f, 'utf8'), MAX_FUNCTION_LINES, MAX_FILE_LINES),
    )
    // several anonymous functions of one file share a key: the longest counts
    const seen = new Map<string, Oversize>()
    for (const o of found) if ((seen.get(o.key)?.lines ?? 0) < o.lines) seen.set(o.key, o)
    const over = [...seen.values()].map((o) => `${o.key} (line ${o.line}): ${o.lines} lines`)
    expect(over, 'over the limit: split it').toEqual([])
  })
})
