/**
 * GET /docs/asyncapi.json: the AsyncAPI 3.0.0 document of the API's WebSockets (public, not in the
 * OpenAPI paths; the OpenAPI document links it in `externalDocs`). Built once from the channels
 * below (./asyncapi-document.ts); only `servers` is per request. A channel is added to `CHANNELS`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ACCOUNT_CHANNEL, ACCOUNT_WS_SCHEMAS } from '../routes/account-ws/channel'
import { MARKET_WS_SCHEMAS, PRICES_CHANNEL, STRATEGIES_CHANNEL } from '../routes/market/ws-channels'
import { type AsyncApiInput, buildAsyncApiDocument, type WsChannel } from './asyncapi-document'
import { API_INFO } from './openapi'

export const ASYNCAPI_PATH = '/docs/asyncapi.json'

/** Every WebSocket of the API, in the order the server registers their routes. */
export const CHANNELS: readonly WsChannel[] = [ACCOUNT_CHANNEL, PRICES_CHANNEL, STRATEGIES_CHANNEL]

export const ASYNCAPI_INPUT: AsyncApiInput = {
  ...API_INFO,
  description:
    'The WebSockets of the Wheelhouse API (docs/market-data.md, docs/account-stream.md). Operations are the API’s: ' +
    '`send` is a message the server sends to a client, `receive` one it receives from a client (its `reply` ' +
    'lists the messages it answers with). Every message is a JSON text frame. The HTTP API is described ' +
    'by the OpenAPI document at /docs/json.',
  channels: CHANNELS,
  schemas: [...ACCOUNT_WS_SCHEMAS, ...MARKET_WS_SCHEMAS],
}

/** host[:port]: a DNS name, an IPv4 address or a bracketed IPv6 one */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/

/**
 * The server is the listener that serves the document, as the OpenAPI document's relative `/` is:
 * the request's host, `wss` when the request came over TLS (behind a proxy: X-Forwarded-Host and
 * X-Forwarded-Proto, read only under TRUST_PROXY). An unusable Host header leaves the host a variable.
 */
export function serversFor(request: Pick<FastifyRequest, 'host' | 'protocol'>) {
  const protocol = request.protocol === 'https' ? 'wss' : 'ws'
  const known = HOST.test(request.host)
  return {
    servers: {
      api: {
        host: known ? request.host : '{host}',
        protocol,
        title: 'This API',
        description: 'the API that serves this document',
        ...(!known && { variables: { host: { description: 'host[:port] of the API' } } }),
      },
    },
    openapi: known ? `${request.protocol}://${request.host}/docs/json` : undefined,
  }
}

export async function asyncapiPlugin(app: FastifyInstance) {
  const { asyncapi, info, ...rest } = buildAsyncApiDocument(ASYNCAPI_INPUT)
  app.get(ASYNCAPI_PATH, { schema: { hide: true } }, async (request) => {
    const { servers, openapi } = serversFor(request)
    const externalDocs = openapi && { externalDocs: { description: 'The HTTP API (OpenAPI)', url: openapi } }
    return { asyncapi, info: { ...(info as object), ...externalDocs }, servers, ...rest }
  })
}
