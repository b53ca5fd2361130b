/**
 * The graph half of the no-cycles rule (docs/architecture.md "Checks that keep the shape"): which
 * modules a source file names, where a relative one lands, and the strongly connected components of
 * the resulting graph. Pure: the caller reads the files and answers `exists`, so the unit test can
 * hand it a cycle it knows.
 */
import { dirname, join } from 'node:path'
import ts from 'typescript'

/** A directed graph: node → the nodes it points at. */
export type Graph = ReadonlyMap<string, readonly string[]>

/**
 * Every module specifier the file names: `import` (with `import type` and side-effect imports),
 * `export … from` (with `export type … from` and `export * from`), `import x = require(…)`,
 * `import('…')` as an expression and as a type. A type-only import is an edge too: it ties the two
 * files' shapes together just the same, and today's type import is tomorrow's value import.
 */
export function moduleSpecifiers(fileName: string, text: string): string[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, scriptKind(fileName))
  const out: string[] = []
  const literal = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) out.push(node.text)
  }
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier)
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      literal(node.moduleReference.expression)
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      literal(node.arguments[0])
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal)
    ts.forEachChild(node, visit)
  }
  visit(file)
  return out
}

function scriptKind(fileName: string): ts.ScriptKind {
  return fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS
}

/** The extensions a relative specifier may leave out, in the order TypeScript's resolver tries them. */
const SOURCE_EXTENSIONS = ['.ts', '.tsx', '.mts'] as const

/**
 * The file a relative specifier (`./x`, `../x/y.js`) of `fromFile` lands on: the path itself, the
 * path with a source extension, a `.js` written for a `.ts` file, or the folder's `index`. Undefined
 * for a bare specifier (a package: the package graph covers those) and for a target that is no source
 * file (`.json`, a generated file the scan leaves out).
 */
export function resolveRelative(fromFile: string, specifier: string, exists: (path: string) => boolean) {
  if (!specifier.startsWith('./') && !specifier.startsWith('../') && specifier !== '.' && specifier !== '..')
    return undefined
  const base = join(dirname(fromFile), specifier)
  const candidates = [
    base,
    ...SOURCE_EXTENSIONS.map((ext) => base + ext),
    ...(/\.(m?js|jsx)$/.test(base) ? SOURCE_EXTENSIONS.map((ext) => base.replace(/\.(m?js|jsx)$/, ext)) : []),
    ...SOURCE_EXTENSIONS.map((ext) => join(base, `index${ext}`)),
  ]
  return candidates.find((c) => /\.(m?ts|tsx)$/.test(c) && exists(c))
}

/**
 * Tarjan's strongly connected components. Each component of more than one node is a cycle, and so
 * is a single node with an edge to itself; both come back, each sorted, the list sorted by its first
 * node so a failure reads the same on every run. Edges to nodes the graph does not hold are ignored.
 * Iterative, so a long import chain cannot overflow the stack.
 */
export function findCycles(graph: Graph): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: string[] = []
  const cycles: string[][] = []
  let next = 0
  const targets = (n: string) => (graph.get(n) ?? []).filter((t) => graph.has(t))

  for (const root of graph.keys()) {
    if (index.has(root)) continue
    const work: { node: string; edges: string[]; at: number }[] = []
    const open = (node: string) => {
      index.set(node, next)
      low.set(node, next)
      next++
      stack.push(node)
      onStack.add(node)
      work.push({ node, edges: targets(node), at: 0 })
    }
    open(root)
    while (work.length > 0) {
      const frame = work[work.length - 1]!
      const target = frame.edges[frame.at++]
      if (target !== undefined) {
        if (!index.has(target)) open(target)
        else if (onStack.has(target)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!))
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!))
      if (low.get(frame.node) !== index.get(frame.node)) continue
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== frame.node)
      if (component.length > 1 || targets(frame.node).includes(frame.node)) cycles.push(component.sort())
    }
  }
  return cycles.sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0))
}

/** A workspace package as the package graph sees it. */
export interface WorkspacePackage {
  readonly name: string
  /** `dependencies`, `devDependencies`, `peerDependencies`, `optionalDependencies` */
  readonly manifest: Readonly<Record<string, unknown>>
  /** the bare specifiers its source imports (`@wh/ledger`, `@wh/wallet/chains`, `viem`) */
  readonly imports?: readonly string[]
}

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const

/**
 * The graph between workspace packages: an edge for every workspace package a manifest names in any
 * dependency field, and for every one the source imports whether declared or not (the root
 * manifest's workspace links make an undeclared import resolve, so the manifest alone can hide a
 * cycle). Only workspace names become nodes; `@wh/x/sub` counts as `@wh/x`.
 */
export function packageGraph(packages: readonly WorkspacePackage[]): Graph {
  const names = new Set(packages.map((p) => p.name))
  const owner = (specifier: string) => [...names].find((n) => specifier === n || specifier.startsWith(`${n}/`))
  const graph = new Map<string, string[]>()
  for (const p of packages) {
    const declared = DEPENDENCY_FIELDS.flatMap((f) => Object.keys((p.manifest[f] as object | undefined) ?? {}))
    // a package naming itself (Node's self-reference) is no edge: the file graph sees through it
    const edges = new Set(
      [...declared, ...(p.imports ?? [])].map(owner).filter((n): n is string => n !== undefined && n !== p.name),
    )
    graph.set(p.name, [...edges].sort())
  }
  return graph
}

/**
 * The file a package's `exports` map gives for a subpath (`.`, `./chains`), relative to the package
 * folder: an exact key first, then a `./*` pattern. A conditional entry answers with its `import`
 * or `default` target. Undefined when the map does not export the subpath.
 */
export function resolveExport(exports: unknown, subpath: string): string | undefined {
  const target = (entry: unknown): string | undefined => {
    if (typeof entry === 'string') return entry
    if (entry && typeof entry === 'object') {
      const conditions = entry as Record<string, unknown>
      return target(conditions['import'] ?? conditions['default'])
    }
    return undefined
  }
  if (typeof exports === 'string' || !exports || typeof exports !== 'object') {
    return subpath === '.' ? target(exports) : undefined
  }
  const map = exports as Record<string, unknown>
  if (subpath in map) return target(map[subpath])
  for (const [key, entry] of Object.entries(map)) {
    const star = key.indexOf('*')
    if (star < 0) continue
    const prefix = key.slice(0, star)
    const suffix = key.slice(star + 1)
    if (!subpath.startsWith(prefix) || !subpath.endsWith(suffix) || subpath.length < key.length - 1) continue
    return target(entry)?.replaceAll('*', subpath.slice(prefix.length, subpath.length - suffix.length))
  }
  return undefined
}
