import Type from 'typebox'

const Check = Type.Union([Type.Literal('up'), Type.Literal('down')])

export const HealthQuery = Type.Object({
  probe: Type.Optional(
    Type.Union([Type.Literal('live'), Type.Literal('ready')], {
      description: '`live`: liveness only, no dependency probed; `ready` (default): readiness',
    }),
  ),
})
export type HealthQueryValue = Type.Static<typeof HealthQuery>

export const LiveResponse = Type.Object({ status: Type.Literal('ok') })

export const HealthResponse = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')], {
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
