/**
 * WS /ws/strategies (spec 4.2, public; docs/market-data.md "WebSocket /ws/strategies"): on connect
 * or subscribe a snapshot of each asset's strategies (the current cycles, the signals), then every
 * strategy event the worker and the signals route publish on Redis pub/sub, in sequence order,
 * forwarded byte for byte by the API's fan-out hub (the second stream on it after /ws/prices).
 * Same client ops as /ws/prices; heartbeats and slow-client drops come from the hub.
 */

import { StrategySnapshotMessage, StrategyStateMessage, WsStrategiesQuery } from '@wh/api-schemas/strategies'
import type { Sql } from '@wh/db'
import {
  type ClientMessage,
  ClientMessage as ClientMessageSchema,
  type MarketNames,
  PRICED_ASSETS,
  readStrategySeqs,
  StrategyEvent,
  strategyNames,
} from '@wh/market'
import type { TradingProfile } from '@wh/trading'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type Type from 'typebox'
import Value from 'typebox/value'
import { errorBody } from '../../plugins/errors'
import type { HubClient, HubStream } from '../../plugins/websocket-hub'
import { currentCycles } from './strategies'

export interface WsStrategiesOptions {
  sql: Sql
  redis: Redis
  names: MarketNames
  profile: TradingProfile
  clock: { now(): Date }
}

const MAX_CLIENT_MESSAGE_CHARS = 1_024
const PRICED: ReadonlySet<string> = new Set(PRICED_ASSETS.map((a) => a.symbol))
/** both the events and the snapshot states start with this head (the publisher writes it) */
const SEQ = /^\{"type":"strategy(?:_state)?","asset":"[A-Z0-9]+","seq":(\d+),/

const errorFrame = (code: string, message: string) => JSON.stringify({ type: 'error', code, message })

export async function wsStrategiesRoute(app: FastifyInstance, opts: WsStrategiesOptions) {
  const sn = strategyNames(opts.names)
  for (const schema of [StrategyEvent, StrategyStateMessage, StrategySnapshotMessage]) app.addSchema(schema)
  const stream: HubStream = {
    name: 'strategies',
    channelOf: (asset) => sn.channel(asset),
    seqOf: (raw) => {
      const m = SEQ.exec(raw)
      return m ? Number(m[1]) : undefined
    },
  }

  /**
   * Each asset's state, stamped with the sequence number read BEFORE the state: an event published
   * meanwhile has a higher number and is delivered after the snapshot, never lost.
   */
  async function loadSnapshot(assets: readonly string[]): Promise<string[]> {
    const seqs = await readStrategySeqs(opts.redis, sn, assets)
    const signals = await opts.sql<{ asset: string; side: string; paused: boolean }[]>`
      select asset, side, paused from signal_state where asset = any(${assets as string[]}::text[])`
    const nowMs = opts.clock.now().getTime()
    return Promise.all(
      assets.map(async (asset, i) => {
        const current = await currentCycles(opts, asset, nowMs)
        const paused = (side: string) =>
          signals.some((s) => s.asset === asset && s.side === side && s.paused) ? 'paused' : 'active'
        const body = {
          ts: new Date(nowMs).toISOString(),
          strategies: current.map((c) => ({
            id: `${asset.toLowerCase()}-${c.kind}`,
            kind: c.kind,
            liveCycles: c.liveCycles,
            currentCycle: c.currentCycle,
            currentCycleNote: c.currentCycleNote,
          })),
          signals: { put: paused('put'), call: paused('call') },
        }
        return `{"type":"strategy_state","asset":${JSON.stringify(asset)},"seq":${seqs[i] ?? 0},${JSON.stringify(body).slice(1)}`
      }),
    )
  }
  const snapshotFrame = (raws: string[]) => `{"type":"snapshot","channel":"strategies","states":[${raws.join(',')}]}`

  function parseAssets(list: readonly string[]): { assets: string[] } | { unknown: string } {
    const assets: string[] = []
    for (const raw of list) {
      const a = raw.trim().toUpperCase()
      if (!PRICED.has(a)) return { unknown: raw }
      if (!assets.includes(a)) assets.push(a)
    }
    return { assets }
  }

  async function subscribe(client: HubClient, assets: string[]) {
    await client.subscribe(stream, assets, loadSnapshot, snapshotFrame)
    if (!client.closed)
      client.send(JSON.stringify({ type: 'subscribed', channel: 'strategies', assets: client.topicsOf(stream) }))
  }

  async function onMessage(client: HubClient, data: Buffer, isBinary: boolean) {
    if (isBinary) return client.send(errorFrame('MALFORMED_MESSAGE', 'send JSON text frames'))
    if (data.length > MAX_CLIENT_MESSAGE_CHARS)
      return client.send(errorFrame('MESSAGE_TOO_LARGE', `at most ${MAX_CLIENT_MESSAGE_CHARS} bytes per message`))
    let msg: unknown
    try {
      msg = JSON.parse(data.toString('utf8'))
    } catch {
      return client.send(errorFrame('MALFORMED_MESSAGE', 'not JSON'))
    }
    if (!Value.Check(ClientMessageSchema, msg))
      return client.send(
        errorFrame('MALFORMED_MESSAGE', 'expected {"op":"subscribe"|"unsubscribe","assets":[...]} or {"op":"ping"}'),
      )
    const m = msg as ClientMessage
    if (m.op === 'ping') return client.send('{"type":"pong"}')
    const parsed = parseAssets(m.assets)
    if ('unknown' in parsed) return client.send(errorFrame('UNKNOWN_ASSET', `unknown asset ${parsed.unknown}`))
    if (m.op === 'subscribe') return subscribe(client, parsed.assets)
    client.unsubscribe(stream, parsed.assets)
    return client.send(JSON.stringify({ type: 'unsubscribed', channel: 'strategies', assets: client.topicsOf(stream) }))
  }

  app.route<{ Querystring: Type.Static<typeof WsStrategiesQuery> }>({
    method: 'GET',
    url: '/ws/strategies',
    schema: {
      tags: ['market'],
      summary: 'WebSocket: strategy snapshot, then strategy events with sequence numbers (docs/market-data.md)',
      description:
        'Upgrade to a WebSocket. Server messages: snapshot {type,channel:"strategies",states:WsStrategyState[]}, ' +
        'StrategyEvent {type:"strategy",asset,seq,ts,event:cycle_opened|order|fill|window_end|settlement|signal|' +
        'capacity|wheel_leg,...}, subscribed/unsubscribed, heartbeat, pong, error. Client messages as /ws/prices ' +
        '(WsClientMessage). Schemas: components StrategyEvent, WsStrategyState, WsStrategySnapshot.',
      querystring: WsStrategiesQuery,
      response: { 426: { $ref: 'ErrorBody#' } },
    },
    handler: async (_request, reply) =>
      reply
        .code(426)
        .header('upgrade', 'websocket')
        .send(errorBody(426, 'UPGRADE_REQUIRED', 'Connect with a WebSocket')),
    wsHandler: (socket, request) => {
      const client = app.fanout.connect(socket)
      socket.on('close', () => client.close())
      socket.on('error', () => client.close())
      socket.on('message', (data: Buffer, isBinary: boolean) => {
        onMessage(client, data, isBinary).catch((err) => {
          request.log.warn({ err: String(err) }, 'ws/strategies message failed')
          client.send(errorFrame('MALFORMED_MESSAGE', 'could not handle the message'))
        })
      })
      const initial = request.query.assets?.split(',').filter(Boolean) ?? [...PRICED]
      const parsed = parseAssets(initial)
      if ('unknown' in parsed) {
        client.send(errorFrame('UNKNOWN_ASSET', `unknown asset ${parsed.unknown}`))
        return
      }
      subscribe(client, parsed.assets).catch((err) =>
        request.log.warn({ err: String(err) }, 'ws/strategies snapshot failed'),
      )
    },
  })
}
