import Type from 'typebox'
import { LiteralUnion } from './literals'

const Check = LiteralUnion(['up', 'down'])

export const HealthQuery = Type.Object({
  probe: Type.Optional(
    LiteralUnion(['live', 'ready'], {
      description: '`live`: liveness only, no dependency probed; `ready` (default): readiness',
    }),
  ),
})
export type HealthQueryValue = Type.Static<typeof HealthQuery>

export const LiveResponse = Type.Object({ status: Type.Literal('ok') })

export const HealthResponse = Type.Object({
  status: LiteralUnion(['ok', 'degraded', 'down'], {
    description:
      '`ok` (200) all up; `degraded` (200) a chain RPC or the exchange is down, the API still serves; ' +
      '`down` (503) Postgres or Redis is down, the API cannot serve',
  }),
  checks: Type.Optional(
    Type.Object(
      {
        postgres: Check,
        redis: Check,
        exchange: Check,
        chains: Type.Record(Type.String(), Check, {
          description: "each deposit chain's RPC (eth_blockNumber), by chain name",
        }),
      },
      { description: 'absent with ?probe=live' },
    ),
  ),
})
