/**
 * The operators' log (the one owner of `operator_actions`): every decision an operator takes on the
 * money path is recorded with who took it and why (docs/hostile-world.md).
 */
import { userInfo } from 'node:os'
import type { Queryable } from '@wh/db'

export interface OperatorAction {
  readonly action: 'chain_resumed' | 'outbound_rechecked' | 'outbound_failed'
  readonly subject: string
  /** who; the OS user running the command when not given */
  readonly actor?: string
  readonly reason: string
  readonly details?: Record<string, unknown>
}

/** The OS user running this process: the default actor of an operator's command. */
export function defaultActor(): string {
  try {
    return userInfo().username
  } catch {
    return 'unknown'
  }
}

export async function recordOperatorAction(sql: Queryable, a: OperatorAction): Promise<void> {
  await sql`
    insert into operator_actions (action, subject, actor, reason, details)
    values (${a.action}, ${a.subject}, ${(a.actor ?? defaultActor()).slice(0, 200)}, ${a.reason.slice(0, 2000)},
      ${a.details ? sql.json(a.details as never) : null})`
}
