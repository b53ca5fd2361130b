/**
 * The journal's append (spec 6): events with their postings and balances, one round trip per
 * batch, through the `ledger_append` SQL function of drizzle/0001_ledger.sql. docs/ledger.md
 * explains the locking order, the striped hot accounts and the dedup.
 */
import { Compile } from 'typebox/compile'
import { isPlatformAccount, ownerOf, userTransit } from './accounts'
import { BatchTooLargeError, InsufficientFreeBalanceError, InvalidEventError } from './errors'
import { eventKey } from './event-keys'
import { AUTHORIZING_EVENT_TYPES, type EventType } from './events'
import { PAYLOAD_SCHEMAS, type Payloads } from './payloads'
import { netPostings } from './postings'
import { POSTING_RULES, type Posting, type PostingRules } from './rules'
import { type Queryable, toJson, toJsonValue } from './sql'
import { uuidv7 } from './uuidv7'

/** TIGER_STYLE: a bound on everything. A batch beyond this is the caller's bug (split it). */
export const MAX_BATCH_EVENTS = 5_000
/**
 * Balance rows per `platform:` account and currency. Concurrent writers pick a slot at random, so
 * ten writers sharing `platform:fee_revenue` rarely wait for the same row lock; a read sums the slots.
 */
export const PLATFORM_BALANCE_SLOTS = 16

/** An event to append; its idempotency key is derived from the payload (spec 6.1). */
export type EventInput = { [T in EventType]: { type: T; payload: Payloads[T]; occurredAt: Date } }[EventType]

/** An event as stored: payload amounts are decimal strings (JSON). */
export interface JournalEvent {
  readonly id: string
  readonly type: EventType
  readonly idempotencyKey: string
  readonly payload: Record<string, unknown>
  readonly userId: string | null
  readonly occurredAt: Date
  readonly recordedAt: Date
}

export interface AppendResult {
  readonly event: JournalEvent
  /** the key existed: this is the earlier event and nothing was posted (spec 6 rule 3) */
  readonly duplicate: boolean
  /**
   * a duplicate whose type or payload differs from the earlier event: still deduplicated as the
   * spec says, but the caller should log a warning, it usually means a key builder was misused
   */
  readonly payloadMismatch: boolean
  /** what this append posted (empty for a duplicate or an event without postings) */
  readonly postings: readonly Posting[]
}

export interface AppendOptions {
  /**
   * The posting rules, by default every rule of the ledger. spec 6 rule 1: an event whose rule
   * does not exist yet is still stored, with no postings; tests pass a partial set to prove it.
   */
  readonly rules?: PostingRules
}

const compiled = new Map<EventType, ReturnType<typeof Compile>>()
function validator(type: EventType) {
  let v = compiled.get(type)
  if (!v) {
    v = Compile(PAYLOAD_SCHEMAS[type])
    compiled.set(type, v)
  }
  return v
}

/** Sorted-keys JSON, for comparing two payloads of one batch that share a key. */
function canonical(value: unknown): string {
  return toJson(sortKeys(toJsonValue(value)))
}
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    )
  return value
}

interface Prepared {
  readonly input: EventInput
  readonly id: string
  readonly key: string
  readonly userId: string | null
  readonly postings: Posting[]
  /** the payload as stored (bigints as strings) */
  readonly stored: Record<string, unknown>
}

function prepare(input: EventInput, rules: PostingRules): Prepared {
  const { type, payload } = input
  const check = validator(type)
  if (!check.Check(payload)) {
    const errors = [...check.Errors(payload)].slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}`)
    throw new InvalidEventError(type, 'payload does not match its schema', { errors })
  }
  if (!(input.occurredAt instanceof Date) || Number.isNaN(input.occurredAt.getTime()))
    throw new InvalidEventError(type, 'occurredAt must be a valid Date')
  const rule = rules[type] as ((p: typeof payload) => readonly Posting[]) | undefined
  const postings = rule ? netPostings(type, rule(payload)) : []
  const userId = 'userId' in payload && typeof payload.userId === 'string' ? payload.userId : null
  // an event belongs to at most one user: the statement and the summary read by events.user_id
  for (const p of postings) {
    const owner = ownerOf(p.account)
    if (owner !== null && owner !== userId)
      throw new InvalidEventError(type, 'a posting touches another user', { account: p.account })
  }
  const stored = toJsonValue(payload) as Record<string, unknown>
  return { input, id: uuidv7(), key: eventKey(type, payload as never), userId, postings, stored }
}

/** A row of ledger_append: a first row with k = null carries the recording time, then one per duplicate. */
interface AppendRow {
  k: string | null
  ins: boolean
  id: string | null
  t: string | null
  p: unknown
  u: string | null
  o: Date | null
  r: Date
  same: boolean
}

/** The batch's unique events, one per key: a later input with a key already in the batch is its duplicate. */
interface Deduplicated {
  /** the first input of each key */
  readonly firstByKey: ReadonlyMap<string, Prepared>
  /** the first inputs, sorted by key (the locking order of ledger_append) */
  readonly unique: readonly Prepared[]
}

function deduplicate(prepared: readonly Prepared[]): Deduplicated {
  const firstByKey = new Map<string, Prepared>()
  for (const p of prepared) if (!firstByKey.has(p.key)) firstByKey.set(p.key, p)
  const unique = [...firstByKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return { firstByKey, unique }
}

/**
 * The balance slot of each account for this batch: 0 for any account but a `platform:` one, which
 * gets one random slot of PLATFORM_BALANCE_SLOTS, the same for all its postings of the batch.
 */
function slotPicker(): (account: string) => number {
  const hotSlot = new Map<string, number>()
  return (account) => {
    if (!isPlatformAccount(account)) return 0
    let s = hotSlot.get(account)
    if (s === undefined) {
      s = Math.floor(Math.random() * PLATFORM_BALANCE_SLOTS)
      hotSlot.set(account, s)
    }
    return s
  }
}

/** The three JSON arguments of ledger_append. */
interface AppendArguments {
  readonly events: readonly object[]
  readonly postings: readonly object[]
  readonly checks: readonly object[]
}

function appendArguments(unique: readonly Prepared[]): AppendArguments {
  const slotOf = slotPicker()
  const events = unique.map((p) => ({
    i: p.id,
    t: p.input.type,
    k: p.key,
    p: p.stored,
    u: p.userId,
    o: p.input.occurredAt.toISOString(),
  }))
  // the owner of each posting is derived in SQL from its account name, and a slot of 0 is the
  // default: neither is sent (a third less JSON for the server to parse)
  const postings = unique.flatMap((p) =>
    p.postings.map((x) => {
      const s = slotOf(x.account)
      return s === 0
        ? { e: p.id, a: x.account, c: x.currency, m: x.amount.toString() }
        : { e: p.id, a: x.account, c: x.currency, m: x.amount.toString(), s }
    }),
  )
  const checks = unique.flatMap((p) => {
    if (!AUTHORIZING_EVENT_TYPES.has(p.input.type) || p.userId === null) return []
    const transit = userTransit(p.userId)
    const currencies = new Set(p.postings.filter((x) => x.account === transit && x.amount < 0n).map((x) => x.currency))
    return [...currencies].map((c) => ({ e: p.id, u: p.userId, c, a: transit }))
  })
  return { events, postings, checks }
}

/** The one round trip: ledger_append stores the batch or raises (mapped to the ledger's errors). */
async function callLedgerAppend(sql: Queryable, { events, postings, checks }: AppendArguments): Promise<AppendRow[]> {
  try {
    return await sql<AppendRow[]>`
      select * from ledger_append(${JSON.stringify(events)}::text::jsonb, ${JSON.stringify(postings)}::text::jsonb,
        ${JSON.stringify(checks)}::text::jsonb)`
  } catch (e) {
    throw mapError(e)
  }
}

/** The result of input `p` whose key's first input is `first`; `row` is the journal's earlier event of that key. */
function resultOf(p: Prepared, first: Prepared, row: AppendRow | undefined, recordedAt: Date): AppendResult {
  const written = row === undefined && first === p
  const event: JournalEvent = row
    ? {
        id: row.id!,
        type: row.t as EventType,
        idempotencyKey: p.key,
        payload: row.p as Record<string, unknown>,
        userId: row.u,
        occurredAt: row.o!,
        recordedAt: row.r,
      }
    : {
        id: first.id,
        type: first.input.type,
        idempotencyKey: first.key,
        payload: first.stored,
        userId: first.userId,
        occurredAt: first.input.occurredAt,
        recordedAt,
      }
  const sameAsFirst =
    first === p || (first.input.type === p.input.type && canonical(first.input.payload) === canonical(p.input.payload))
  const samePayload = row ? row.same && sameAsFirst : sameAsFirst
  return {
    event,
    duplicate: !written,
    payloadMismatch: !written && !samePayload,
    postings: written ? p.postings : [],
  }
}

/** The results in input order, from ledger_append's rows (the recording time, then the duplicates). */
function resultsOf(
  prepared: readonly Prepared[],
  firstByKey: ReadonlyMap<string, Prepared>,
  rows: readonly AppendRow[],
): AppendResult[] {
  const recordedAt = rows.find((r) => r.k === null)?.r ?? new Date()
  const existing = new Map(rows.filter((r) => r.k !== null).map((r) => [r.k!, r]))
  return prepared.map((p) => resultOf(p, firstByKey.get(p.key)!, existing.get(p.key), recordedAt))
}

/**
 * Appends events atomically in one round trip: all are stored (or deduplicated) together, or, when
 * an authorizing event would take a free balance below zero, none is (InsufficientFreeBalanceError).
 * Results come back in input order. Run it on the pool or inside the caller's `sql.begin`
 * (READ COMMITTED, the default: a duplicate must see the winner's committed row).
 *
 * @example
 *   const [r] = await appendBatch(sql, [{ type: 'deposit_detected', payload, occurredAt }])
 *   if (r.payloadMismatch) log.warn({ key: r.event.idempotencyKey }, 'key reused with another payload')
 */
export async function appendBatch(
  sql: Queryable,
  inputs: readonly EventInput[],
  opts: AppendOptions = {},
): Promise<AppendResult[]> {
  if (inputs.length === 0) return []
  if (inputs.length > MAX_BATCH_EVENTS) throw new BatchTooLargeError(inputs.length, MAX_BATCH_EVENTS)
  const rules = opts.rules ?? POSTING_RULES
  const prepared = inputs.map((i) => prepare(i, rules))
  const { firstByKey, unique } = deduplicate(prepared)
  const rows = await callLedgerAppend(sql, appendArguments(unique))
  return resultsOf(prepared, firstByKey, rows)
}

/** Appends one event; see appendBatch. */
export async function append(sql: Queryable, input: EventInput, opts: AppendOptions = {}): Promise<AppendResult> {
  const [result] = await appendBatch(sql, [input], opts)
  return result!
}

function mapError(e: unknown): unknown {
  const err = e as { code?: string; detail?: string }
  if (err?.code === 'WL001') {
    const d = JSON.parse(err.detail ?? '{}') as { userId: string; currency: string; freeBalance: string }
    return new InsufficientFreeBalanceError({
      userId: d.userId,
      currency: d.currency,
      freeBalance: BigInt(d.freeBalance ?? '0'),
    })
  }
  return e
}

/**
 * Which of `keys` the journal holds (for readers that must know whether a fact was recorded, e.g.
 * a bridge transfer's `bridged`). One index lookup per key.
 */
export async function recordedKeys(sql: Queryable, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set()
  const rows = await sql<{ k: string }[]>`
    select idempotency_key as k from ledger_events where idempotency_key = any(${keys as string[]}::text[])`
  return new Set(rows.map((r) => r.k))
}
