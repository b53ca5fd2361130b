/**
 * The error codes the API can answer, read from its source (for errors.test.ts, which checks each
 * has a sentence in errors.ts): the service's code is the list, so a code added anywhere shows up
 * as a missing sentence, never as a raw code on a user's screen. Node only (fs, TypeScript's
 * parser); the console never imports it.
 *
 * A code is an upper-case string literal (`SOME_CODE`) given as
 * - the `code` of an object (`new AppError({ code: 'X' })`, a socket's `{ code: 'X', message }`),
 * - the first argument of a `super(...)` call (BusinessRuleError's subclasses) or of `new …Error(…)`,
 * - the second argument of `errorBody(status, 'X', …)`,
 * - a value of a variable named `code` (the error plugin's 413/414/415 mapping),
 * - a key of `FAILURE_REASONS` (a failed withdrawal's code, GET /withdrawals `failureCode`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

const CODE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$|^[A-Z]{4,}$/

function sources(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...sources(p))
    else if (/\.tsx?$/.test(name) && !/\.(test|d|gen)\.tsx?$/.test(name)) out.push(p)
  }
  return out
}

/** Every upper-case string literal inside `node`. */
function literals(node: ts.Node): string[] {
  const out: string[] = []
  const visit = (n: ts.Node) => {
    if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && CODE.test(n.text)) out.push(n.text)
    ts.forEachChild(n, visit)
  }
  visit(node)
  return out
}

function codesOf(text: string, path: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const out: string[] = []
  const visit = (n: ts.Node) => {
    if (ts.isPropertyAssignment(n) && n.name.getText(file) === 'code') out.push(...literals(n.initializer))
    else if (ts.isVariableDeclaration(n) && n.name.getText(file) === 'code' && n.initializer)
      out.push(...literals(n.initializer))
    else if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      const callee = n.expression.getText(file)
      const first = callee === 'super' || (ts.isNewExpression(n) && callee.endsWith('Error'))
      const arg = first ? n.arguments?.[0] : callee === 'errorBody' ? n.arguments?.[1] : undefined
      if (arg && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) && CODE.test(arg.text))
        out.push(arg.text)
    } else if (ts.isVariableDeclaration(n) && n.name.getText(file) === 'FAILURE_REASONS' && n.initializer) {
      const init = ts.isAsExpression(n.initializer) ? n.initializer.expression : n.initializer
      if (ts.isObjectLiteralExpression(init))
        for (const p of init.properties) if (p.name && CODE.test(p.name.getText(file))) out.push(p.name.getText(file))
    }
    ts.forEachChild(n, visit)
  }
  visit(file)
  return out
}

/** The codes in the API's source and the packages it runs (apps/api/src, packages/*\/src), sorted. */
export function apiErrorCodes(root: string): string[] {
  const dirs = [
    join(root, 'apps/api/src'),
    ...readdirSync(join(root, 'packages'))
      .map((p) => join(root, 'packages', p, 'src'))
      .filter((d) => statSync(d, { throwIfNoEntry: false })?.isDirectory()),
  ]
  const codes = new Set<string>()
  for (const f of dirs.flatMap(sources)) for (const c of codesOf(readFileSync(f, 'utf8'), f)) codes.add(c)
  return [...codes].sort()
}
