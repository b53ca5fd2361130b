/**
 * A wheel as the API shows it (the `Wheel` schema): GET /positions lists them, PATCH /wheels/{id}
 * and POST /wheels/{id}/resume answer one. Its settings are the ones in effect (docs/trading.md
 * "Wheel settings"): the wheel's own figures, else the active profile's.
 */
import type { Sql } from '@wh/db'
import { resolveWheelSettings, type StoredWheelSettings, type TradingProfile } from '@wh/trading'

export interface WheelViewRow extends StoredWheelSettings {
  id: string
  asset: string
  state: 'running' | 'stopping' | 'stopped'
  stop_mode: 'after_cycle' | 'now' | null
  cycles: number
  current_position_id: string | null
  reason: string | null
  created_at: Date
  stopped_at: Date | null
}

/** The select list of a WheelViewRow from `wheels`. */
export const wheelColumns = (sql: Sql) => sql`id, asset, state, stop_mode, cycles::int as cycles, current_position_id,
  reason, created_at, stopped_at, strike_by, put_target_delta_bps, call_target_delta_bps, otm_bps, min_tenor_hours,
  max_tenor_days, at_expiry`

export function wheelItem(w: WheelViewRow, profile: TradingProfile) {
  return {
    id: w.id,
    asset: w.asset,
    state: w.state,
    stopMode: w.stop_mode,
    cycles: w.cycles,
    currentPositionId: w.current_position_id,
    reason: w.reason,
    settings: resolveWheelSettings(w, profile),
    createdAt: w.created_at.toISOString(),
    stoppedAt: w.stopped_at?.toISOString() ?? null,
  }
}

/** The caller's wheel, or undefined when it is not theirs. */
export async function wheelOf(sql: Sql, userId: string, id: string): Promise<WheelViewRow | undefined> {
  const [w] = await sql<
    WheelViewRow[]
  >`select ${wheelColumns(sql)} from wheels where id = ${id} and user_id = ${userId}`
  return w
}
