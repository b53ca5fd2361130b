/**
 * The OpenAPI documents pass Redocly's recommended rules with no error (what a generator or a
 * portal meets first): the public API's and the operator desk's. Warnings are allowed and counted.
 */
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core'
import { integrationContext } from '@wh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildAdminServer } from '../src/admin/server'
import { makeOperators } from './desk-support'
import { type Api, startApi } from './support'

async function lint(source: string): Promise<NormalizedProblem[]> {
  const config = await createConfig({ extends: ['recommended'] })
  return lintFromString({ source, absoluteRef: '/docs/json', config })
}
const errorsOf = (problems: NormalizedProblem[]) =>
  problems
    .filter((p) => p.severity === 'error')
    .map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`)

describe('the OpenAPI documents under Redocly lint (recommended)', () => {
  let api: Api
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  beforeAll(async () => {
    api = await startApi()
    ctx = await integrationContext()
  })
  afterAll(async () => {
    await api?.close()
    await ctx?.database.close()
  })

  it('the public API: no error', async () => {
    const doc = await api.app.inject({ method: 'GET', url: '/docs/json' })
    expect(doc.statusCode).toBe(200)
    expect(errorsOf(await lint(doc.body))).toEqual([])
  })

  it('the operator desk: no error', async () => {
    const desk = await buildAdminServer({
      database: ctx.database,
      clients: new Map(),
      operators: { auth: { kind: 'password' }, approvalsRequired: 1 },
      logger: false,
    })
    try {
      const { viewer } = await makeOperators(ctx.ownerUrl, [{ name: 'viewer', role: 'viewer' }])
      const login = await desk.inject({
        method: 'POST',
        url: '/admin/session',
        payload: { operator: 'viewer', password: viewer },
      })
      const doc = await desk.inject({
        method: 'GET',
        url: '/docs/json',
        headers: { authorization: `Bearer ${login.json().token}` },
      })
      expect(doc.statusCode).toBe(200)
      expect(errorsOf(await lint(doc.body))).toEqual([])
    } finally {
      await desk.close()
    }
  })
})
