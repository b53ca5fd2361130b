/**
 * Builds the published package into dist/ (`pnpm run build`; `pnpm pack` runs it as prepack). Node
 * runs this file as it is (type stripping): no tsx needed.
 *
 * 1. tsc with tsconfig.build.json: ES2022 modules and declarations, type-checked against the
 *    browser's lib only (no Node types), so nothing the package ships leans on Node. Sources
 *    import each other with `.js` (what Node and browsers resolve; TypeScript maps it to .ts).
 * 2. dist/types.d.ts written again with every type spelled out. src/types.ts derives the API's
 *    shapes from @wh/api-schemas, whose TypeBox schemas import the server's domain packages: that
 *    package is not published, and the spelled-out types need nothing but TypeScript.
 * 3. Checks, any failure failing the build: every file imports only files of dist and viem; the
 *    declarations compile on their own in strict mode with skipLibCheck off; no spelled-out type
 *    is `any`; each is mutually assignable with the one derived from the schemas.
 *
 * The monorepo itself imports src/ (package.json `exports`); `publishConfig.exports` points the
 * packed copy at dist/ (apps/api/test/client-package.test.ts installs and runs it).
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

const ROOT = join(import.meta.dirname, '..')
const DIST = join(ROOT, 'dist')
const SRC = join(ROOT, 'src')
const TYPES_SOURCE = join(SRC, 'types.ts')
const FLAGS =
  ts.NodeBuilderFlags.NoTruncation | ts.NodeBuilderFlags.InTypeAlias | ts.NodeBuilderFlags.MultilineObjectLiterals

function failOn(diagnostics: readonly ts.Diagnostic[], what: string): void {
  if (diagnostics.length === 0) return
  const host: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => '\n',
  }
  console.error(`build: ${what}\n${ts.formatDiagnosticsWithColorAndContext(diagnostics, host)}`)
  process.exit(1)
}

function configOf(file: string): ts.ParsedCommandLine {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, file),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => failOn([d], file),
    },
  )
  if (!parsed) throw new Error(`cannot read ${file}`)
  failOn(parsed.errors, file)
  return parsed
}

/** Step 1: JavaScript and declarations; the program, for step 2. */
function emit(): ts.Program {
  const config = configOf('tsconfig.build.json')
  const program = ts.createProgram(config.fileNames, config.options)
  // this package's files only: the workspace packages its types come from have their own
  // typecheck, and checking them all again (viem's types among them) would triple the time
  const own = program.getSourceFiles().filter((f) => f.fileName.startsWith(SRC))
  const emitted = own.map((f) => program.emit(f))
  failOn(
    [
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...own.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
      ...emitted.flatMap((r) => r.diagnostics),
    ],
    'tsc',
  )
  return program
}

/** Step 2: each exported alias of src/types.ts as a type literal, with its doc comment. */
function spellOutTypes(program: ts.Program): string[] {
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(TYPES_SOURCE)
  if (!source) throw new Error('src/types.ts is not in the build')
  const printer = ts.createPrinter()
  const names: string[] = []
  const out = [
    '/**',
    " * The API's request and response shapes, spelled out by scripts/build.ts from the TypeBox",
    ' * schemas the API validates and documents with (GET /docs/json). Generated: do not edit.',
    ' */',
  ]
  for (const statement of source.statements) {
    if (!ts.isTypeAliasDeclaration(statement)) continue
    const name = statement.name.text
    const node = checker.typeToTypeNode(checker.getTypeAtLocation(statement.name), undefined, FLAGS)
    if (!node) throw new Error(`cannot spell out ${name}`)
    const text = printer.printNode(ts.EmitHint.Unspecified, node, source)
    if (/\bany\b/.test(text)) throw new Error(`${name} spells out to a type with any:\n${text}`)
    const docs = (ts.getLeadingCommentRanges(source.text, statement.pos) ?? [])
      .map((r) => source.text.slice(r.pos, r.end))
      .filter((c) => c.startsWith('/**'))
    out.push(...docs, `export type ${name} = ${text};`)
    names.push(name)
  }
  writeFileSync(join(DIST, 'types.d.ts'), `${out.join('\n')}\n`)
  return names
}

/**
 * Step 3a: what dist imports is dist itself (relative, with the .js a browser and Node need) or
 * viem, and its declarations compile alone, as a consumer's strict compiler reads them.
 */
function checkDeclarationsAlone(): void {
  for (const f of readdirSync(DIST)) {
    for (const [, spec = ''] of readFileSync(join(DIST, f), 'utf8').matchAll(/(?:from|import) '([^']+)'/g)) {
      const ok = spec.startsWith('./') ? existsSync(join(DIST, spec)) : spec === 'viem' || spec.startsWith('viem/')
      if (!ok) throw new Error(`dist/${f} imports ${spec}, which the published package does not hold`)
    }
  }
  const files = readdirSync(DIST).filter((f) => f.endsWith('.d.ts'))
  const program = ts.createProgram(
    files.map((f) => join(DIST, f)),
    {
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      // TypeScript's own lib.dom.d.ts is taken as correct; our declarations are checked
      skipDefaultLibCheck: true,
      types: [],
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
    },
  )
  failOn(ts.getPreEmitDiagnostics(program), 'the declarations do not compile on their own')
}

/**
 * Step 3b: every spelled-out type against the one derived from the schemas, both ways, in the
 * build's program with one file more (its other files are reused, not parsed again).
 */
function checkSameTypes(names: readonly string[], build: ts.Program): void {
  const file = join(SRC, '__spelled-out-types.check.ts')
  const text = [
    "import type * as D from '../dist/types.js'",
    "import type * as S from './types.js'",
    'type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false',
    ...names.map((n) => `export const ${n}: Same<D.${n}, S.${n}> = true`),
  ].join('\n')
  const options = { ...build.getCompilerOptions(), noEmit: true }
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists } = host
  host.fileExists = (f) => f === file || fileExists(f)
  // the build's parsed and bound files, as a language service shares them between programs
  host.getSourceFile = (f, lang, ...rest) =>
    f === file ? ts.createSourceFile(f, text, lang) : (build.getSourceFile(f) ?? getSourceFile(f, lang, ...rest))
  const program = ts.createProgram([...build.getRootFileNames(), file], options, host, build)
  failOn(
    ts.getPreEmitDiagnostics(program, program.getSourceFile(file)),
    'a spelled-out type differs from the one derived from the schemas',
  )
}

rmSync(DIST, { recursive: true, force: true })
const program = emit()
const names = spellOutTypes(program)
checkDeclarationsAlone()
checkSameTypes(names, program)
console.log(`build: dist/ written, ${names.length} API types spelled out and checked`)
