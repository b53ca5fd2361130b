/**
 * The AsyncAPI document builder without a server: a further channel (an authenticated one, as a
 * private stream will be) is one more `WsChannel` and the document stays valid; the builder refuses
 * what would make a wrong document; the server named per request (ws or wss, the host).
 */
import { createRequire } from 'node:module'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import Type from 'typebox'
import { describe, expect, it } from 'vitest'
import { ASYNCAPI_INPUT, serversFor } from './asyncapi'
import { buildAsyncApiDocument, type WsChannel, type WsMessage } from './asyncapi-document'

const specs = createRequire(import.meta.url)('@asyncapi/specs') as { schemas: Record<string, object> }
// the official schema bundles its own draft-07 meta-schema: Ajv's is left out
const ajv = (addFormats as unknown as (a: Ajv) => Ajv)(
  new Ajv({ strict: false, allErrors: true, meta: false, validateSchema: false }),
)
const validate = ajv.compile(specs.schemas['3.0.0'] as object)

const PRICES = ASYNCAPI_INPUT.channels.find((c) => c.id === 'prices')
const Balance = Type.Object({ type: Type.Literal('balance'), amount: Type.String() }, { $id: 'WsBalance' })
const balance: WsMessage = { id: 'Balance', name: 'balance', title: 'Balance', summary: 'a balance', payload: Balance }
const account: WsChannel = {
  id: 'balances',
  address: '/ws/balances',
  title: 'Balances',
  description: 'one user’s balances',
  security: [{ name: 'bearerAuth', scheme: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } }],
  receives: PRICES?.receives.filter((m) => m.name === 'ping') ?? [],
  sends: [balance, ...(PRICES?.sends.filter((m) => m.name === 'pong') ?? [])],
  replies: { ping: ['pong'] },
  closeCodes: [{ code: 1008, reason: 'the token expired' }],
}
const withServer = (doc: object) => ({
  ...doc,
  servers: serversFor({ host: 'api.example.com', protocol: 'https' }).servers,
})

describe('buildAsyncApiDocument', () => {
  it('takes one more channel, authenticated, and the document stays valid', () => {
    const doc = buildAsyncApiDocument({ ...ASYNCAPI_INPUT, channels: [...ASYNCAPI_INPUT.channels, account] }) as {
      // biome-ignore lint/suspicious/noExplicitAny: read as plain JSON
      [k: string]: any
    }
    expect(validate(withServer(doc)), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true)
    expect(doc.channels.balances.address).toBe('/ws/balances')
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.operations.sendBalancesBalance.security).toEqual([{ $ref: '#/components/securitySchemes/bearerAuth' }])
    expect(doc.operations.receiveBalancesPing.reply.messages).toEqual([{ $ref: '#/channels/balances/messages/pong' }])
    expect(doc.operations.sendPricesPrice.security).toBeUndefined()
    // a message shared by channels is one component; the new schema is one too
    expect(doc.channels.balances.messages.pong).toEqual(doc.channels.prices.messages.pong)
    expect(doc.components.schemas.WsBalance.properties.type).toEqual({ type: 'string', const: 'balance' })
    // a document of public channels only names no security scheme
    const open = ASYNCAPI_INPUT.channels.filter((c) => !c.security)
    expect(buildAsyncApiDocument({ ...ASYNCAPI_INPUT, channels: open }).components).not.toHaveProperty(
      'securitySchemes',
    )
  })

  it('refuses what would make a wrong document', () => {
    const build =
      (channel: WsChannel, schemas: object[] = []) =>
      () =>
        buildAsyncApiDocument({ title: 't', version: '1', description: 'd', channels: [channel], schemas })
    const other = Type.Object({ type: Type.Literal('other') }, { $id: 'WsBalance' })
    expect(build({ ...account, sends: [balance, { ...balance, id: 'Other', name: 'other', payload: other }] })).toThrow(
      /two different schemas named WsBalance/,
    )
    const dangling = Type.Object({ a: Type.Unsafe({ $ref: 'Nowhere#' }) }, { $id: 'Dangling' })
    expect(build({ ...account, sends: [{ ...balance, payload: dangling }] })).toThrow(/unresolved .*Nowhere#/)
    expect(build({ ...account, sends: [{ ...balance, payload: Type.Object({}) }] })).toThrow(/needs a schemaName/)
    expect(build({ ...account, replies: { ping: ['nothing'] } })).toThrow(/replies with unknown nothing/)
    expect(build({ ...account, sends: [balance, { ...balance, id: 'Balance2' }] })).toThrow(/two messages named/)
    expect(build({ ...account, sends: [balance, { ...balance, title: 'changed' }] })).toThrow(/two different messages/)
  })
})

describe('serversFor', () => {
  it('names the host that served the document, wss over TLS, ws otherwise', () => {
    expect(serversFor({ host: 'api.example.com', protocol: 'https' })).toEqual({
      servers: { api: expect.objectContaining({ host: 'api.example.com', protocol: 'wss' }) },
      openapi: 'https://api.example.com/docs/json',
    })
    expect(serversFor({ host: '127.0.0.1:3000', protocol: 'http' }).servers.api).toMatchObject({
      host: '127.0.0.1:3000',
      protocol: 'ws',
    })
    expect(serversFor({ host: '[::1]:3000', protocol: 'http' }).servers.api.host).toBe('[::1]:3000')
  })

  it('leaves the host a variable when the Host header is not a host', () => {
    const { servers, openapi } = serversFor({ host: 'evil.example/<script>', protocol: 'http' })
    expect(servers.api).toMatchObject({ host: '{host}', variables: { host: expect.any(Object) } })
    expect(openapi).toBeUndefined()
    expect(validate({ ...buildAsyncApiDocument(ASYNCAPI_INPUT), servers })).toBe(true)
  })
})
