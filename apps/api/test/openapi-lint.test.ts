/**
 * The OpenAPI documents pass Redocly's recommended rules with no error (what a generator or a
 * portal meets first): the public API's and the operator desk's. Warnings are allowed and counted.
 */
import { randomBytes } from 'node:crypto'
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core'
import { integrationContext } from '@wh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildAdminServer } from '../src/admin/server'
import { type Api, startApi } from './support'

const PASSWORD = randomBytes(16).toString('hex')

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
      password: PASSWORD,
      database: ctx.database,
      clients: new Map(),
      logger: false,
    })
    try {
      const doc = await desk.inject({
        method: 'GET',
        url: '/docs/json',
        headers: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` },
      })
      expect(doc.statusCode).toBe(200)
      expect(errorsOf(await lint(doc.body))).toEqual([])
    } finally {
      await desk.close()
    }
  })
})
