/**
 * The control API over HTTP (`/_sim/<op>`, docs/exchange.md "Control API"): each operation's body is
 * checked against its schema first, and a body it cannot honour is answered 400 naming the field
 * (an unknown field, a currency or asset the simulator does not list, a malformed address or amount)
 * before anything changes. An advance the simulator was told to refuse (`timeTravel: false`: its
 * clients follow the wall clock, so a moved exchange clock would refuse every signature they make)
 * is answered 409 saying so.
 */
import { scopeOfWire } from '@wh/exchange'
import Type, { type TSchema } from 'typebox'
import Value from 'typebox/value'
import { getAddress, type Hex } from 'viem'
import { COLLATERALS, UNDERLYINGS, type Underlying } from './assets'
import type { SessionKeyGrant, SimControl } from './control'
import type { SimEngine } from './engine'
import { startOwnedL1Watcher } from './l1-deposits'
import { startOwnedL1Payer } from './l1-withdrawals'
import { whitelistRecipient } from './session-keys'

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' })
const Decimal = Type.String({ pattern: '^\\d+(\\.\\d+)?$' })
const Count = Type.Integer({ minimum: 0 })
const Asset = Type.Union(Object.keys(COLLATERALS).map((a) => Type.Literal(a)))
const Currency = Type.Union(UNDERLYINGS.map((u) => Type.Literal(u)))
const KeyGrant = Type.Union([
  Address,
  Type.Object(
    {
      address: Address,
      scopes: Type.Optional(Type.Array(Type.String())),
      subaccount_ids: Type.Optional(Type.Array(Count)),
      expiry_sec: Type.Optional(Count),
      label: Type.Optional(Type.String()),
      offchain_scopes: Type.Optional(Type.Array(Type.String())),
    },
    { additionalProperties: false },
  ),
])

/** The body each operation takes; none for `state`. */
const BODIES: Record<string, TSchema> = {
  state: Type.Object({}),
  advance: Type.Object({ ms: Type.Optional(Count), to: Type.Optional(Count) }),
  set_price: Type.Object({ currency: Currency, price: Decimal }),
  register_wallet: Type.Object({
    wallet: Address,
    owner: Type.Optional(Address),
    session_keys: Type.Optional(Type.Array(KeyGrant)),
  }),
  wallet_balance: Type.Object({ wallet: Address, asset_name: Asset }),
  fund_wallet: Type.Object({ wallet: Address, asset_name: Asset, amount: Decimal }),
  set_balance: Type.Object({ subaccount_id: Count, asset_name: Asset, amount: Decimal }),
  watch_l1: Type.Object({
    rpc_url: Type.String({ minLength: 1 }),
    manager: Address,
    confirmations: Type.Optional(Count),
    poll_ms: Type.Optional(Count),
    from_block: Type.Optional(Type.Union([Count, Type.String({ pattern: '^\\d+$' })])),
  }),
  pay_l1: Type.Object({
    rpc_url: Type.String({ minLength: 1 }),
    outbox: Address,
    operator_key: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }),
    confirmations: Type.Optional(Count),
    poll_ms: Type.Optional(Count),
    fee_usd: Type.Optional(Decimal),
  }),
  whitelist_recipient: Type.Object({ owner: Address, recipient: Address }),
  subaccounts: Type.Object({ owner: Address }),
  fail_next: Type.Object({
    method: Type.Optional(Type.String()),
    code: Type.Optional(Type.Integer()),
    http_status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
    count: Type.Optional(Type.Integer({ minimum: 1 })),
  }),
}

/** A refusal of the control API: its status and the field it names. */
export class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message)
  }
}

/** The body checked against the operation's schema: unknown fields first, then each field's type. */
export function checkBody(op: string, body: unknown): Record<string, unknown> {
  const schema = BODIES[op]
  if (!schema) throw new ControlError(404, `unknown control ${op}`)
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new ControlError(400, 'the body must be a JSON object')
  const known = Object.keys((schema as { properties?: object }).properties ?? {})
  const unknown = Object.keys(body).find((k) => !known.includes(k))
  if (unknown !== undefined)
    throw new ControlError(400, `unknown field ${unknown} (${op} takes ${known.join(', ') || 'no field'})`, unknown)
  if (!Value.Check(schema, body)) {
    const first = Value.Errors(schema, body)[0]
    const field = first?.instancePath.replace(/^\//, '').split('/')[0] || undefined
    throw new ControlError(400, `${field ?? 'body'}: ${first?.message ?? 'invalid'}`, field)
  }
  return body as Record<string, unknown>
}

function grantOf(g: unknown): SessionKeyGrant {
  if (typeof g === 'string') return getAddress(g)
  const o = g as { address: string; scopes?: string[]; subaccount_ids?: number[]; expiry_sec?: number; label?: string }
  const scopes = o.scopes?.map((s) => {
    const scope = scopeOfWire(s)
    if (!scope) throw new ControlError(400, `session_keys: unknown scope ${s}`, 'session_keys')
    return scope
  })
  return {
    address: getAddress(o.address),
    ...(scopes && { scopes }),
    ...(o.subaccount_ids && { subaccountIds: o.subaccount_ids }),
    ...(o.expiry_sec !== undefined && { expirySec: o.expiry_sec }),
    ...(o.label !== undefined && { label: o.label }),
    ...((g as { offchain_scopes?: string[] }).offchain_scopes && {
      offchainScopes: (g as { offchain_scopes: string[] }).offchain_scopes,
    }),
  }
}

function advance(control: SimControl, b: Record<string, unknown>, timeTravel: boolean) {
  if (!timeTravel)
    throw new ControlError(
      409,
      "time travel is off: this simulator's clients sign with the wall clock (WORKER_CLOCK=system), and a moved " +
        'exchange clock would refuse their auth, nonces and expiries. Run the worker on WORKER_CLOCK=exchange ' +
        '(the local run does) and start the simulator without --no-time-travel to move its clock',
    )
  if ((b.ms === undefined) === (b.to === undefined)) throw new ControlError(400, 'give exactly one of ms and to', 'ms')
  if (b.to !== undefined && Number(b.to) < control.nowMs())
    throw new ControlError(400, `to: ${b.to} is before the simulator's time ${control.nowMs()}`, 'to')
  return { now: b.to !== undefined ? control.advanceTo(Number(b.to)) : control.advance(Number(b.ms)) }
}

/** Runs one checked control operation; its answer's body. */
export async function runControl(
  engine: SimEngine,
  control: SimControl,
  op: string,
  b: Record<string, unknown>,
  o: { timeTravel: boolean },
): Promise<unknown> {
  const s = (k: string) => String(b[k])
  switch (op) {
    case 'state':
      return {
        now: engine.now(),
        prices: Object.fromEntries([...engine.market.index].map(([k, v]) => [k, v.toString()])),
      }
    case 'advance':
      return advance(control, b, o.timeTravel)
    case 'set_price':
      control.setPrice(s('currency') as Underlying, s('price'))
      return { ok: true }
    case 'register_wallet': {
      const sessionKeys = ((b.session_keys as unknown[] | undefined) ?? []).map(grantOf)
      control.registerWallet({
        wallet: getAddress(s('wallet')),
        ...(b.owner !== undefined && { owner: getAddress(s('owner')) }),
        sessionKeys,
      })
      return { ok: true }
    }
    case 'wallet_balance':
      // the local stand-in for reading the exchange wallet on the exchange's own chain
      return { amount: control.walletBalance(getAddress(s('wallet')), s('asset_name')) }
    case 'fund_wallet':
      control.fundWallet(getAddress(s('wallet')), s('asset_name'), s('amount'))
      return { ok: true }
    case 'set_balance':
      if (!engine.subaccounts.has(Number(b.subaccount_id)))
        throw new ControlError(400, `subaccount_id: no subaccount ${b.subaccount_id}`, 'subaccount_id')
      control.setBalance(Number(b.subaccount_id), s('asset_name'), s('amount'))
      return { ok: true }
    default:
      return runL1Control(engine, control, op, b)
  }
}

async function runL1Control(engine: SimEngine, control: SimControl, op: string, b: Record<string, unknown>) {
  const s = (k: string) => String(b[k])
  switch (op) {
    case 'watch_l1': {
      // the local run's v3 money in: credit what an OnchainActionManager on the L1 queues (l1-deposits.ts)
      const w = startOwnedL1Watcher(engine, {
        rpcUrl: s('rpc_url'),
        manager: getAddress(s('manager')),
        confirmations: Number(b.confirmations ?? 0),
        pollMs: Number(b.poll_ms ?? 1_000),
        ...(b.from_block !== undefined && { fromBlock: BigInt(s('from_block')) }),
      })
      return { applied: await w.poll() }
    }
    case 'pay_l1': {
      // the local run's v3 money out: pay withdrawals through a WithdrawalOutbox on the L1 (l1-withdrawals.ts)
      const payer = await startOwnedL1Payer(engine, {
        rpcUrl: s('rpc_url'),
        outbox: getAddress(s('outbox')),
        operatorKey: s('operator_key') as Hex,
        confirmations: Number(b.confirmations ?? 0),
        pollMs: Number(b.poll_ms ?? 1_000),
        ...(b.fee_usd !== undefined && { feeUsd: s('fee_usd') }),
      })
      return { pending: payer.pending() }
    }
    case 'whitelist_recipient':
      // an owner's private/update_whitelisted_recipients, without the signed action
      whitelistRecipient(engine, getAddress(s('owner')), getAddress(s('recipient')))
      return { ok: true }
    case 'subaccounts':
      // an owner's subaccounts and which is its fallback (what the local run reads its funding subaccount from)
      return control.subaccountsOf(getAddress(s('owner')))
    case 'fail_next':
      control.failNext({
        ...(b.method !== undefined && { method: s('method') }),
        ...(b.code !== undefined && { code: Number(b.code) }),
        ...(b.http_status !== undefined && { httpStatus: Number(b.http_status) }),
        ...(b.count !== undefined && { count: Number(b.count) }),
      })
      return { ok: true }
    default:
      throw new ControlError(404, `unknown control ${op}`)
  }
}
