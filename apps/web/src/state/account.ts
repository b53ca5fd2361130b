/**
 * The signed-in account, kept live (docs/console.md "Live, not refreshed"): the API's reads, taken
 * again when WS /ws/account says something changed (events.ts maps each event to what it makes
 * stale), with no Refresh button. The stream resumes by itself after a dropped connection and
 * replays what was missed; a new snapshot (after a long absence) takes every read again.
 */
import { effect, signal } from '@preact/signals'
import {
  type AccountStream,
  ApiError,
  type DepositAddressResponse,
  type DepositsResponse,
  openAccountStream,
  type PositionsResponse,
  type SummaryResponse,
  type WheelCyclesResponse,
  type WheelDecision,
  type WithdrawalRoutesResponse,
  type WithdrawalsResponse,
} from '@wh/client'
import { API_URL } from '../config'
import { errorText } from '../errors'
import { api, sessionExpired, token } from '../session'
import { type AccountPart, describeEvent, staleAfter, wheelsStale } from './events'
import { notify } from './notices'

export const summary = signal<SummaryResponse | undefined>(undefined)
export const positions = signal<PositionsResponse | undefined>(undefined)
export const withdrawals = signal<WithdrawalsResponse | undefined>(undefined)
export const withdrawalRoutes = signal<WithdrawalRoutesResponse | undefined>(undefined)
export const deposits = signal<DepositsResponse | undefined>(undefined)
export const depositAddress = signal<DepositAddressResponse | undefined>(undefined)
/** per wheel id: its latest decisions, newest first */
export const decisions = signal<Readonly<Record<string, readonly WheelDecision[]>>>({})
/** per wheel id: its cycles and their economics */
export const cycles = signal<Readonly<Record<string, WheelCyclesResponse>>>({})
/** bumped when the statement's first page is stale (the Statement page reads it again) */
export const statementVersion = signal(0)
export const streamStatus = signal<string>('closed')
/** the last events, newest first, in words */
export const activity = signal<ReadonlyArray<{ seq: number; at: string; text: string }>>([])

/** Decisions shown per wheel; cycles read per wheel. */
export const DECISIONS_SHOWN = 20
const CYCLES_READ = 50
const ACTIVITY_SHOWN = 30
/** The stream's amounts are base units: its snapshot names their decimals (docs/account-stream.md "Amounts"). */
let decimals: Record<string, number> = { USDC: 6, ETH: 18, BTC: 8 }

/**
 * Reads the decisions and cycles of the wheels in `only` (every wheel when undefined), and of any wheel not read
 * yet; the others keep what was read. Wheels no longer listed are dropped.
 */
async function loadWheels(only?: ReadonlySet<string>): Promise<void> {
  const wheels = positions.peek()?.wheels ?? []
  const known = decisions.peek()
  const wanted = wheels.filter((w) => only === undefined || only.has(w.id) || !(w.id in known))
  const read = await Promise.all(
    wanted.map(async (w) => {
      const [d, c] = await Promise.all([
        api.wheelDecisions(w.id, { limit: DECISIONS_SHOWN }),
        api.wheelCycles(w.id, { limit: CYCLES_READ }),
      ])
      return [w.id, d.decisions, c] as const
    }),
  )
  const listed = new Set(wheels.map((w) => w.id))
  const kept = <T>(r: Readonly<Record<string, T>>) => Object.entries(r).filter(([id]) => listed.has(id))
  decisions.value = Object.fromEntries([...kept(decisions.peek()), ...read.map(([id, d]) => [id, d] as const)])
  cycles.value = Object.fromEntries([...kept(cycles.peek()), ...read.map(([id, , c]) => [id, c] as const)])
}

/** Each read; the wheels' takes the wheels named stale since the last read (undefined: all of them). */
const LOADERS: Readonly<Record<AccountPart, (wheels?: ReadonlySet<string>) => Promise<void>>> = {
  summary: async () => {
    summary.value = await api.portfolioSummary()
  },
  positions: async (wheels) => {
    positions.value = await api.positions({ limit: 100 })
    await loadWheels(wheels)
  },
  wheels: loadWheels,
  withdrawals: async () => {
    withdrawals.value = await api.withdrawals({ limit: 50 })
  },
  routes: async () => {
    withdrawalRoutes.value = await api.withdrawalRoutes()
  },
  deposits: async () => {
    const [address, list] = await Promise.all([
      depositAddress.peek() ? Promise.resolve(depositAddress.peek()) : api.depositAddress(),
      api.deposits({ limit: 50 }),
    ])
    depositAddress.value = address
    deposits.value = list
  },
  statement: async () => {
    statementVersion.value++
  },
}
const EVERYTHING = Object.keys(LOADERS) as AccountPart[]

let pending = new Set<AccountPart>()
/** the wheels named stale since the last read; undefined: all of them */
let pendingWheels: Set<string> | undefined = new Set()
let timer: ReturnType<typeof setTimeout> | undefined

/**
 * Takes these reads again, soon: events that come together are read once. `wheels` names the wheels whose
 * decisions and cycles are stale (state/events.ts wheelsStale); without it, all of them.
 */
export function refresh(parts: readonly AccountPart[], wheels: readonly string[] | 'all' = 'all'): void {
  // signed out: nothing of the account to read (a read without a token would be a 401)
  if (!token.peek()) return
  for (const p of parts) pending.add(p)
  if (parts.includes('wheels') || parts.includes('positions')) {
    if (wheels === 'all') pendingWheels = undefined
    else for (const id of wheels) pendingWheels?.add(id)
  }
  // positions read the wheels too
  if (pending.has('positions')) pending.delete('wheels')
  clearTimeout(timer)
  timer = setTimeout(() => {
    const now = pending
    const wheels = pendingWheels
    pending = new Set()
    pendingWheels = new Set()
    const asked = token.peek()
    for (const p of now)
      LOADERS[p](wheels).catch((e) => {
        // the token it was read with was refused (expired, revoked): sign in again
        if (e instanceof ApiError && e.statusCode === 401) {
          if (asked && asked === token.peek()) sessionExpired()
        } else notify(errorText(e), 'error')
      })
  }, 50)
}

function clear(): void {
  for (const s of [summary, positions, withdrawals, withdrawalRoutes, deposits, depositAddress]) s.value = undefined
  decisions.value = {}
  cycles.value = {}
  activity.value = []
}

let stream: AccountStream | undefined
let snapshots = 0

/** Opens the stream for the token, reopens it for another, closes it without one. */
effect(() => {
  const t = token.value
  stream?.close()
  stream = undefined
  clear()
  if (!t) {
    streamStatus.value = 'closed'
    return
  }
  refresh(EVERYTHING)
  snapshots = 0
  stream = openAccountStream({
    baseUrl: API_URL,
    token: () => token.peek(),
    onSnapshot: (s) => {
      decimals = { ...decimals, ...s.decimals }
      // the first is the state just read; a later one follows an absence too long to replay
      if (snapshots++ > 0) refresh(EVERYTHING)
    },
    onEvent: (e) => {
      const said = describeEvent(e, decimals)
      activity.value = [{ seq: e.seq, at: e.at, text: said.text }, ...activity.value].slice(0, ACTIVITY_SHOWN)
      if (said.notice) notify(said.text, said.notice)
      refresh(staleAfter(e.kind), wheelsStale(e.data as Record<string, unknown>, positions.peek()?.positions ?? []))
    },
    onStatus: (s) => {
      streamStatus.value = s
    },
    onAuthFailed: () => sessionExpired(),
  })
})
