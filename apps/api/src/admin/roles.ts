/**
 * Each desk route's role (docs/operations.md "Operators and roles"), declared once: the role the
 * desk's hook checks (`config.role`, server.ts) and what its OpenAPI document shows, the scope of the
 * route's security requirement, `x-role` and the first words of its description, so the two cannot
 * drift. viewer: reads; operator: also proposes, rechecks and raises the stop; approver: also approves.
 */
import type { OperatorRole } from '@wh/ops'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the role a desk route needs; 'public' only for the sign-in */
    role?: OperatorRole | 'public'
  }
}

/** The security requirement of a desk route: a session token or cookie, with the role as its scope. */
export function deskSecurity(role: OperatorRole): Array<Record<string, readonly string[]>> {
  return [{ deskSession: [role] }, { deskCookie: [role] }]
}

/** A desk route's options: its role in `config` and in its documented schema. */
export function deskRoute<S extends object>(role: OperatorRole | 'public', schema: S) {
  const description = (schema as { description?: string }).description
  return {
    config: { role },
    schema: {
      ...schema,
      description: `**Role: ${role === 'public' ? 'none (anyone may try)' : role}.**${description ? ` ${description}` : ''}`,
      'x-role': role,
      security: role === 'public' ? [] : deskSecurity(role),
    },
  }
}
