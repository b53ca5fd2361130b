/** Schemas of POST /webhooks/signals and GET /signals/state (docs/trading.md "Signals"). */

import { SIGNAL_SIGNATURE_HEADER, SIGNAL_TIMESTAMP_HEADER, SignalBody } from '@wh/trading'
import Type from 'typebox'
import { LiteralUnion } from './literals'

export { SignalBody }

export const SignalHeaders = Type.Object({
  [SIGNAL_TIMESTAMP_HEADER]: Type.Optional(Type.String({ description: 'unix seconds when the signal was sent' })),
  [SIGNAL_SIGNATURE_HEADER]: Type.Optional(
    Type.String({ description: '`sha256=` + hex HMAC-SHA256 of `<timestamp>.<raw body>` keyed by WEBHOOK_SECRET' }),
  ),
})

const SideState = Type.Object({
  selling: LiteralUnion(['active', 'paused']),
  reason: Type.Union([Type.String(), Type.Null()]),
  source: Type.Union([Type.String(), Type.Null()]),
  signalId: Type.Union([Type.String(), Type.Null()], { description: 'the signal that set this state, if any' }),
  since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
})

export const SignalStateResponse = Type.Object({
  assets: Type.Array(Type.Object({ asset: Type.String(), put: SideState, call: SideState }), {
    description: 'every traded underlying; a side no signal touched is active',
  }),
})

export const SignalAccepted = Type.Object({
  signalId: Type.String(),
  asset: Type.String(),
  sides: Type.Array(Type.String()),
  action: Type.String(),
  applied: Type.Boolean({
    description: 'false when a newer signal already decided these sides (the signal is recorded, the state kept)',
  }),
})
