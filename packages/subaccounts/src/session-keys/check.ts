/**
 * The service's session keys at Derive (docs/operations.md "Exchange session keys"): a key per duty
 * (SESSION_PRIVATE_KEY trades and moves collateral, EXCHANGE_PAYOUT_SESSION_KEY withdraws to L1), each
 * with a successor during a renewal (…_NEXT). At start the worker reads them back through
 * `private/session_keys` and refuses to run when one holds more than its duty or cannot do it
 * (`checkSessionKeys`); the worker's `exchange-session-keys` tick (`runSessionKeys`) reads them every
 * hour and alerts, once a day per key, when one expires within EXCHANGE_SESSION_KEY_ALERT_DAYS, so its
 * renewal (a new key registered by the owner, both valid for a while, then the old one retired)
 * happens with the trading uninterrupted: the client signs with whichever registered key lives longest.
 */
import type { Config } from '@wh/config'
import { errorMessage } from '@wh/core'
import { type DeriveClient, dutyProblems, type KeyDuty, type V3Wire } from '@wh/exchange'
import type { Alerter } from '@wh/wallet'
import type { Redis } from 'ioredis'
import { type Address, getAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const DAY_MS = 86_400_000

export interface ConfiguredKey {
  readonly duty: KeyDuty
  /** the setting that holds it */
  readonly setting: string
  readonly address: Address
  /** a successor (…_NEXT): not registered yet is not a problem */
  readonly next: boolean
}

/** Every session key the configuration holds, with its duty and setting (addresses only). */
export function configuredKeys(config: Config): ConfiguredKey[] {
  const k = config.keys
  const entries: Array<[KeyDuty, string, `0x${string}` | undefined, boolean]> = [
    ['trading', 'SESSION_PRIVATE_KEY', k.sessionPrivateKey, false],
    ['trading', 'SESSION_PRIVATE_KEY_NEXT', k.sessionPrivateKeyNext, true],
    ['payout', 'EXCHANGE_PAYOUT_SESSION_KEY', k.payoutSessionKey, false],
    ['payout', 'EXCHANGE_PAYOUT_SESSION_KEY_NEXT', k.payoutSessionKeyNext, true],
  ]
  return entries.flatMap(([duty, setting, key, next]) =>
    key ? [{ duty, setting, address: privateKeyToAccount(key).address, next }] : [],
  )
}

export interface KeyReport extends ConfiguredKey {
  /** unix seconds; undefined: not registered at the exchange */
  readonly expirySec: number | undefined
  readonly problems: readonly string[]
}

/** Each configured key as the exchange holds it, and what is wrong with it (nothing: it fits its duty). */
export function reportKeys(config: Config, registered: readonly V3Wire.SessionKey[], nowMs: number): KeyReport[] {
  const byAddress = new Map(registered.map((r) => [getAddress(r.public_session_key), r]))
  const nowSec = Math.floor(nowMs / 1000)
  return configuredKeys(config).map((c) => {
    const r = byAddress.get(c.address)
    if (!r) return { ...c, expirySec: undefined, problems: c.next ? [] : ['is not registered at the exchange'] }
    const fundingSubaccountId = config.exchange.fundingSubaccountId
    return { ...c, expirySec: r.expiry_sec, problems: dutyProblems(r, c.duty, { nowSec, fundingSubaccountId }) }
  })
}

/** A line per problem, naming the setting and the address, never a key. */
export function keyProblemLines(reports: readonly KeyReport[]): string[] {
  return reports.flatMap((r) => r.problems.map((p) => `${r.setting} (${r.address}) ${p}`))
}

/**
 * At start: the configured keys read back from the exchange; the lines of what does not fit (the worker
 * refuses to start on any), or why the exchange could not be read (the tick checks again).
 */
export async function checkSessionKeys(
  config: Config,
  exchange: DeriveClient,
  nowMs: number,
): Promise<{ lines: string[]; reports: KeyReport[] } | { unreadable: string }> {
  let registered: V3Wire.SessionKey[]
  try {
    registered = await exchange.sessionKeys()
  } catch (e) {
    return { unreadable: errorMessage(e) }
  }
  const reports = reportKeys(config, registered, nowMs)
  return { lines: keyProblemLines(reports), reports }
}

export interface SessionKeysSummary {
  readonly keys: ReadonlyArray<{ setting: string; address: Address; expiresInDays: number | null }>
  readonly alerted: readonly string[]
}

/**
 * The tick: every configured key read back; a key that expires within EXCHANGE_SESSION_KEY_ALERT_DAYS, or
 * no longer fits its duty, alerts (once a day per key and reason, a Redis mark).
 */
export async function runSessionKeys(deps: {
  config: Config
  exchange: DeriveClient
  redis: Redis
  alerter: Alerter
  clock: { now(): Date }
}): Promise<SessionKeysSummary> {
  const now = deps.clock.now().getTime()
  const reports = reportKeys(deps.config, await deps.exchange.sessionKeys(), now)
  const leadMs = deps.config.exchange.sessionKeyAlertDays * DAY_MS
  const day = Math.floor(now / DAY_MS)
  const alerted: string[] = []
  for (const r of reports) {
    const expiring = r.expirySec !== undefined && r.expirySec * 1000 - now <= leadMs && !r.next
    const reasons = [...r.problems, ...(expiring ? ['expires soon'] : [])]
    for (const reason of reasons) {
      const mark = `session-keys:alerted:${r.address}:${reason}:${day}`
      if ((await deps.redis.set(mark, '1', 'EX', 2 * 86_400, 'NX')) !== 'OK') continue
      const when = r.expirySec === undefined ? 'unregistered' : new Date(r.expirySec * 1000).toISOString()
      const text =
        reason === 'expires soon'
          ? `exchange session key ${r.setting} (${r.address}) expires at ${when}: renew it (docs/operations.md "Exchange session keys")`
          : `exchange session key ${r.setting} (${r.address}) ${reason}`
      await deps.alerter.alert(text, { setting: r.setting, address: r.address, expiresAt: when })
      alerted.push(`${r.setting}: ${reason}`)
    }
  }
  const keys = reports.map((r) => ({
    setting: r.setting,
    address: r.address,
    expiresInDays: r.expirySec === undefined ? null : Math.floor((r.expirySec * 1000 - now) / DAY_MS),
  }))
  return { keys, alerted }
}
