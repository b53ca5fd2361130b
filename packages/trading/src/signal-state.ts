/**
 * The pause/resume state of selling, per asset and side (docs/trading.md "Signals"): the owner of
 * `signal_state`. A signal is recorded as `signal_received` in the journal and moves the state of
 * the sides it names in the same transaction; its id is accepted once.
 */
import { AppError, UNDERLYINGS } from '@wh/core'
import type { Sql } from '@wh/db'
import { append } from '@wh/ledger'
import { type Signal, type SignalSide, sidesOf } from './signals'

/** The signal's id was recorded before: a replay (or a resend) changes nothing. */
export class SignalReplayedError extends AppError {
  constructor(id: string) {
    super({ code: 'SIGNAL_REPLAYED', statusCode: 409, message: `signal ${id} was already received` })
  }
}

export interface RecordedSignal {
  readonly sides: readonly SignalSide[]
  readonly source: string
  /** false when a newer signal already decided one of the sides (the late one is only recorded) */
  readonly applied: boolean
}

/**
 * Records an authenticated signal sent at `at`: the journal event and the state of its sides, in
 * one transaction. A second signal with the same id throws SignalReplayedError and changes nothing.
 */
export async function recordSignal(sql: Sql, s: Signal, at: Date): Promise<RecordedSignal> {
  const sides = sidesOf(s.side)
  const source = s.source ?? 'webhook'
  const applied = await sql.begin(async (tx) => {
    const r = await append(tx, {
      type: 'signal_received',
      payload: {
        signalId: s.id,
        source,
        data: { asset: s.asset, side: s.side, action: s.action, ...(s.reason && { reason: s.reason }) },
      },
      occurredAt: at,
    })
    if (r.duplicate) throw new SignalReplayedError(s.id)
    // a late signal older than the stored one is recorded but does not undo the newer decision
    const rows = await tx`
      insert into signal_state (asset, side, paused, reason, signal_id, source, signal_at)
      select ${s.asset}, side, ${s.action === 'pause'}, ${s.reason ?? null}, ${s.id}, ${source}, ${at}
      from unnest(${sides as string[]}::text[]) as side
      on conflict (asset, side) do update set
        paused = excluded.paused, reason = excluded.reason, signal_id = excluded.signal_id,
        source = excluded.source, signal_at = excluded.signal_at, updated_at = now()
      where signal_state.signal_at <= excluded.signal_at
      returning side`
    return rows.length === sides.length
  })
  return { sides, source, applied }
}

interface StateRow {
  asset: string
  side: 'put' | 'call'
  paused: boolean
  reason: string | null
  source: string
  signal_id: string
  signal_at: Date
}

/** Whether selling is active or paused, per underlying and side (active when no signal said otherwise). */
export async function readSignalState(sql: Sql) {
  const rows = await sql<StateRow[]>`
    select asset, side, paused, reason, source, signal_id, signal_at from signal_state`
  const find = (asset: string, side: 'put' | 'call') => {
    const r = rows.find((x) => x.asset === asset && x.side === side)
    return r
      ? {
          selling: r.paused ? ('paused' as const) : ('active' as const),
          reason: r.reason,
          source: r.source,
          signalId: r.signal_id,
          since: r.signal_at.toISOString(),
        }
      : { selling: 'active' as const, reason: null, source: null, signalId: null, since: null }
  }
  return { assets: UNDERLYINGS.map((asset) => ({ asset, put: find(asset, 'put'), call: find(asset, 'call') })) }
}
