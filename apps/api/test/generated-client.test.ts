/**
 * The OpenAPI document is enough for a frontend that does not use @wh/client: types generated from
 * `/docs/json` by openapi-typescript, a small program written against them with openapi-fetch and
 * viem's SIWE helper, compiled by TypeScript in strict mode, then run against the real API over
 * HTTP: sign in, deposit address, positions, withdrawals, statement.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, DOMAIN, startApi } from './support'

const DIR = join(import.meta.dirname, '..', 'test-output', `generated-client-${process.pid}`)

/** The program a frontend developer would write, against the generated `paths` and named `components` only. */
const PROGRAM = `
import createClient from 'openapi-fetch'
import { createSiweMessage } from 'viem/siwe'
import { privateKeyToAccount } from 'viem/accounts'
import type { components, paths } from './schema.js'

// the resources are named types, their closed sets of strings enumerations
type Position = components['schemas']['Position']
type Withdrawal = components['schemas']['Withdrawal']
type StatementLine = components['schemas']['StatementLine']
const side: Position['side'] = 'put'
// @ts-expect-error not a side the API knows
const wrongSide: Position['side'] = 'straddle'

export async function run(baseUrl: string, key: \`0x\${string}\`, domain: string) {
  const api = createClient<paths>({ baseUrl })
  const account = privateKeyToAccount(key)
  const nonce = await api.GET('/auth/nonce')
  if (!nonce.data) throw new Error('no nonce')
  const message = createSiweMessage({
    domain,
    address: account.address,
    statement: 'Sign in to Wheelhouse',
    uri: \`https://\${domain}\`,
    version: '1',
    chainId: 1,
    nonce: nonce.data.nonce,
    issuedAt: new Date(),
  })
  const signed = await api.POST('/auth/verify', {
    body: { message, signature: await account.signMessage({ message }) },
  })
  if (!signed.data) throw new Error(\`verify: \${JSON.stringify(signed.error)}\`)
  const token: string = signed.data.token
  const authed = { headers: { authorization: \`Bearer \${token}\` } }
  const address = await api.GET('/deposit-address', authed)
  const positions = await api.GET('/positions', authed)
  const withdrawals = await api.GET('/withdrawals', authed)
  const statement = await api.GET('/portfolio/statement', authed)
  const refused = await api.POST('/withdrawals', {
    ...authed,
    body: { chain: 'base', asset: 'USDC', amount: '1.0000001', destination: account.address },
  })
  const listed: Position[] = positions.data?.positions ?? []
  const sent: Withdrawal[] = withdrawals.data?.items ?? []
  const lines: StatementLine[] = typeof statement.data === 'object' ? statement.data.rows : []
  return {
    named: [listed.length, sent.length, lines.length, side, wrongSide].length,
    depositAddress: address.data?.address,
    positions: positions.data?.positions.length,
    withdrawals: withdrawals.data?.items.length,
    // the statement answers JSON or text/csv: the generated type says so
    statementRows: typeof statement.data === 'object' ? statement.data.rows.length : undefined,
    refusedStatus: refused.response.status,
    refusedCode: refused.error?.code,
  }
}
`

describe('a client generated from the OpenAPI document', () => {
  let api: Api
  let baseUrl: string
  beforeAll(async () => {
    api = await startApi()
    baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 })
    mkdirSync(DIR, { recursive: true })
  })
  afterAll(async () => {
    await api?.close()
    rmSync(DIR, { recursive: true, force: true })
  })

  it('generates types, compiles a program against them in strict mode, and runs it against the API', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json()
    writeFileSync(join(DIR, 'schema.ts'), astToString(await openapiTS(doc)))
    writeFileSync(join(DIR, 'program.ts'), PROGRAM)

    const program = ts.createProgram([join(DIR, 'program.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      types: [],
    })
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    expect(diagnostics).toEqual([])

    const { run } = (await import(join(DIR, 'program.ts'))) as {
      run: (base: string, key: `0x${string}`, domain: string) => Promise<Record<string, unknown>>
    }
    const out = await run(baseUrl, generatePrivateKey(), DOMAIN)
    expect(out).toEqual({
      named: 5,
      depositAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
      positions: 0,
      withdrawals: 0,
      statementRows: 0,
      refusedStatus: 400,
      refusedCode: 'INVALID_AMOUNT',
    })
  })
})
