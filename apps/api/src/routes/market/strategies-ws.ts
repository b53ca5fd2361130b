/**
 * WS /ws/strategies (spec 4.2, public; docs/market-data.md "WebSocket /ws/strategies"): on connect
 * or subscribe a snapshot of each asset's strategies (the current cycles, the signals), then every
 * strategy event the worker and the signals route publish on Redis pub/sub, in sequence order,
 * forwarded byte for byte by the API's fan-out hub (the second stream on it after /ws/prices).
 * Same client ops as /ws/prices; heartbeats and slow-client drops come from the hub.
 */

import { StrategySnapshotMessage, StrategyStateMessage, WsStrategiesQuery } from '@wh/api-schemas/strategies'
import type { Sql } from '@wh/db'
import { currentCycles, type MarketNames, readStrategySeqs, StrategyEvent, strategyNames } from '@wh/market'
import type { TradingProfile } from '@wh/trading'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type Type from 'typebox'
import type { HubStream } from '../../plugins/websocket-hub'
import { topicSocket } from './ws-topics'

export interface WsStrategiesOptions {
  sql: Sql
  redis: Redis
  names: MarketNames
  profile: TradingProfile
  clock: { now(): Date }
}

/** both the events and the snapshot states start with this head (the publisher writes it) */
const SEQ = /^\{"type":"strategy(?:_state)?","asset":"[A-Z0-9]+","seq":(\d+),/

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
    ...topicSocket(app, { channel: 'strategies', stream, loadSnapshot, snapshotFrame }),
  })
}
