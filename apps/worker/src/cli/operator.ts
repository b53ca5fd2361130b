/**
 * Who runs an operator's command (docs/operations.md "From the command line"): the operator named by
 * `--operator`, signed in with their password read from standard input, never from the command line
 * (where `ps` and the shell's history would keep it). The recorded actor of every decision is that
 * signed-in operator, and their role is checked as on the desk.
 */
import type { Queryable } from '@wh/db'
import { checkOperatorPassword, hasRole, type Operator, type OperatorRole } from '@wh/ops'

/**
 * One line from standard input: typed without echo at a terminal, else the first line of what is
 * piped in (`printf '%s\n' "$PASSWORD" | tsx src/cli/…`).
 */
export async function readSecretLine(prompt: string): Promise<string> {
  const stdin = process.stdin
  if (!stdin.isTTY) {
    let text = ''
    for await (const chunk of stdin) {
      text += String(chunk)
      if (text.includes('\n')) break
    }
    return (text.split('\n')[0] ?? '').replace(/\r$/, '')
  }
  process.stderr.write(prompt)
  stdin.setRawMode(true)
  stdin.resume()
  return new Promise((resolve) => {
    let line = ''
    const onData = (data: Buffer) => {
      for (const ch of data.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          stdin.setRawMode(false)
          stdin.pause()
          stdin.off('data', onData)
          process.stderr.write('\n')
          return resolve(line)
        }
        if (ch === '\u0003') process.exit(130)
        line = ch === '\u007f' ? line.slice(0, -1) : line + ch
      }
    }
    stdin.on('data', onData)
  })
}

/** The signed-in operator named `name`, with at least `role`; prints the refusal and exits 1 otherwise. */
export async function signInOperator(sql: Queryable, name: string | undefined, role: OperatorRole): Promise<Operator> {
  if (!name) {
    console.error('--operator <name> is required: the decision is recorded with who took it')
    process.exit(2)
  }
  const password = await readSecretLine(`password of ${name}: `)
  const operator = await checkOperatorPassword(sql, name.trim().toLowerCase(), password)
  if (!operator) {
    console.log(JSON.stringify({ error: 'SIGN_IN_REJECTED', message: 'wrong name or password' }))
    process.exit(1)
  }
  if (!hasRole(operator.role, role)) {
    console.log(JSON.stringify({ error: 'ROLE_REQUIRED', message: `this needs the ${role} role` }))
    process.exit(1)
  }
  return operator
}
