/**
 * Operators for the desk's and Bull Board's tests: created as the schema owner (the application's
 * role may not: migration 0027), each with a fresh password, and signed in over HTTP.
 */
import { randomBytes } from 'node:crypto'
import { createOperator, type OperatorRole } from '@wh/ops'
import postgres from 'postgres'

/** A password the strength rule accepts. */
export const newPassword = () => `pw-${randomBytes(18).toString('base64url')}`

/** Creates each operator as the owner; returns their passwords by name. */
export async function makeOperators(
  ownerUrl: string,
  operators: ReadonlyArray<{ name: string; role: OperatorRole }>,
): Promise<Record<string, string>> {
  const owner = postgres(ownerUrl, { max: 1, onnotice: () => {} })
  try {
    const passwords: Record<string, string> = {}
    for (const o of operators) {
      const password = newPassword()
      await createOperator(owner, { name: o.name, role: o.role, password })
      passwords[o.name] = password
    }
    return passwords
  } finally {
    await owner.end()
  }
}

/** Signs in to a desk at `base`; the session token (also set as the cookie). */
export async function deskSignIn(base: string, operator: string, password: string): Promise<string> {
  const res = await fetch(`${base}/admin/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ operator, password }),
  })
  if (res.status !== 200) throw new Error(`sign-in of ${operator}: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { token: string }).token
}

/** A JSON call to the desk with a bearer session (or the given headers). */
export function deskCaller(base: string) {
  return async (
    method: string,
    path: string,
    o: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(o.token && { authorization: `Bearer ${o.token}` }),
        ...(o.body !== undefined && { 'content-type': 'application/json' }),
        ...o.headers,
      },
      ...(o.body !== undefined && { body: JSON.stringify(o.body) }),
    })
    const text = await res.text()
    // biome-ignore lint/suspicious/noExplicitAny: the desk's JSON answers, read field by field by each test
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any, headers: res.headers }
  }
}
