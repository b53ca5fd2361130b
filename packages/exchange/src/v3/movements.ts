/**
 * The service's collateral movements on v3 (docs/exchange-v3.md "Movements on v3"). v3 has no
 * Derive Wallet, no private/deposit and no private/create_subaccount: the platform's funds at the
 * exchange sit in its own funding subaccount (topped up by L1 deposits), and every movement the
 * worker makes is one `private/transfer_spot` signed by the sending subaccount:
 *
 *   create_subaccount → funding subaccount → a new subaccount (`new_subaccount_manager` = an SRM id)
 *   deposit           → funding subaccount → the user's subaccount
 *   withdraw          → the user's subaccount → funding subaccount
 *
 * The worker keeps v2's names and its store-then-send rules (signTransfer, then sendSigned of the
 * stored params). A transfer fee is taken in kind from the amount, so a deposit or withdraw is
 * signed with `max_fee_usd` 0 (refused rather than made short). A creation is charged: it is signed
 * with the configured cap and sends the cap's worth on top of the amount (`creationTerms`); the
 * worker journals the fee taken (docs/exchange-v3.md "Movements on v3").
 */
import type { Address, Hex } from 'viem'
import type { SignedTransfer, TransferRequest } from '../client/requests'
import { V3_MODULES } from '../protocol/constants'
import { fromE18, toE18, toUnits } from '../protocol/decimal'
import { encodeTransferSpot, encodeWithdrawalDataV3 } from '../protocol/module-data'
import type * as T from '../protocol/types'
import { exactInteger, fundingSubaccountOf, type SignedV3, spotAssetOf, type V3Port, V3UnsupportedError } from './port'
import type * as W from './wire.gen'

/** How long a signature of the funding subaccount holds the next one back if it is never sent. */
export const SEND_ORDER_WAIT_MS = 10_000

/** A timer that never keeps the process alive, cancelled by the function it returns. */
function unrefTimer(fn: () => void, ms: number): () => void {
  const timer = setTimeout(fn, ms)
  timer.unref?.()
  return () => clearTimeout(timer)
}

/**
 * v3 transfer nonces must increase per sending subaccount (derive-py), and the funding subaccount
 * sends every funding of every user, from concurrent rows. So this client signs for one sender
 * only once its previous signature for it was sent and answered, or SEND_ORDER_WAIT_MS passed
 * (a signature its caller never sent). Process-local: the exchange cycle lock keeps one funding
 * run at a time across processes.
 */
export class SendOrder {
  readonly #tails = new Map<number, Promise<void>>()
  readonly #open = new Map<string, () => void>()

  /** `schedule` runs `fn` after `ms` and returns its cancel; tests pass one they fire themselves. */
  constructor(
    readonly waitMs = SEND_ORDER_WAIT_MS,
    readonly schedule: (fn: () => void, ms: number) => () => void = unrefTimer,
  ) {}

  /** Runs `sign` after the sender's previous signature went out; `sent(nonce)` lets the next one sign. */
  async inTurn(sender: number, sign: () => Promise<SignedV3>): Promise<SignedV3> {
    const before = this.#tails.get(sender) ?? Promise.resolve()
    let release = () => {}
    const mine = new Promise<void>((resolve) => {
      release = resolve
    })
    this.#tails.set(sender, mine)
    await before
    let signed: SignedV3
    try {
      signed = await sign()
    } catch (err) {
      release()
      throw err
    }
    const key = signed.nonce.toString()
    const cancel = this.schedule(() => this.sent(key), this.waitMs)
    this.#open.set(key, () => {
      cancel()
      release()
    })
    return signed
  }

  sent(nonce: string): void {
    this.#open.get(nonce)?.()
    this.#open.delete(nonce)
  }
}

/** The SRM (or PMRM2) manager id a new subaccount is created under: the first universe risking `currency`. */
async function managerIdOf(port: V3Port, currency: string, marginType: 'SM' | 'PM' | 'PM2' = 'SM'): Promise<number> {
  const managers = (await port.wireCurrency(currency)).managers
  const id = managers.map((m) => (marginType === 'SM' ? m.sm : m.pm)).find((m) => typeof m === 'number' && m > 0)
  if (typeof id !== 'number') throw new Error(`no ${marginType} manager risks ${currency} on v3`)
  return id
}

interface SpotMove {
  from: number
  to: number
  newManager: number
  asset_name: string
  amount: string
  max_fee_usd: string
  expirySec?: number
}

/** Signs a transfer_spot (the sender's one signature) and returns the request as the spec types it, nonce aside. */
async function signSpot(port: V3Port, m: SpotMove, sign = port.sign.bind(port)) {
  const { address } = await spotAssetOf(port, m.asset_name)
  const data = encodeTransferSpot({
    toSubaccountId: BigInt(m.to),
    newSubaccountManager: BigInt(m.newManager),
    asset: address,
    subId: 0n,
    amountE18: toE18(m.amount),
    maxFeeUsdE18: toE18(m.max_fee_usd),
  })
  const s = await sign(m.from, V3_MODULES.transfer, data, m.expirySec)
  const params = {
    subaccount_id: m.from,
    to_subaccount_id: m.to,
    new_subaccount_manager: m.newManager,
    asset_name: m.asset_name,
    sub_id: 0,
    amount: m.amount,
    max_fee_usd: m.max_fee_usd,
    signer: s.signer,
    signature: s.signature,
    signature_expiry_sec: s.signature_expiry_sec,
  }
  return { nonce: s.nonce, params }
}

/** v3 signs amounts of at most 12 decimals (docs/exchange-v3.md "Nonces, expiries and number formats"). */
const V3_MAX_PLACES = 12

/**
 * What a creation sends on top of its amount for the fee: the cap (USD, e18) in units of the asset at the exchange's
 * spot price (e18), rounded up to what the asset and v3 can carry. USDC at 1 gives the cap itself.
 */
export function creationOnTopE18(capE18: bigint, priceE18: bigint, decimals: number): bigint {
  if (priceE18 <= 0n) throw new Error('the exchange gives no spot price for the creation fee')
  const step = 10n ** BigInt(18 - Math.min(V3_MAX_PLACES, decimals))
  const units = (capE18 * 10n ** 18n + priceE18 - 1n) / priceE18
  return ((units + step - 1n) / step) * step
}

/**
 * What a creation signs: the amount plus the fee cap in the asset (`creationOnTopE18`, at the spot price read now),
 * capped by `max_fee_usd`, so the new subaccount receives the whole amount; what the exchange does not take stays
 * there and the worker books it (docs/exchange-v3.md "Movements on v3"). A zero cap signs the amount alone.
 */
async function creationTerms(port: V3Port, asset_name: string, amount: string) {
  const capE18 = toE18(port.creationFeeCapUsd)
  if (capE18 === 0n) return { amount, max_fee_usd: '0' }
  const [{ spot_price }, { decimals }] = await Promise.all([
    port.call('public/get_currency', { currency: asset_name }),
    spotAssetOf(port, asset_name),
  ])
  const onTop = creationOnTopE18(capE18, toE18(spot_price), decimals)
  return { amount: fromE18(toE18(amount) + onTop), max_fee_usd: port.creationFeeCapUsd }
}

/**
 * Signs the worker's movement as a transfer_spot, without sending it (stored first, as on v2). The
 * nonce is kept as a decimal string: the params go through JSON and jsonb, which would round it.
 */
export async function signMovement(port: V3Port, order: SendOrder, r: TransferRequest): Promise<SignedTransfer> {
  const funding = fundingSubaccountOf(port)
  const common = { asset_name: r.asset_name, amount: r.amount, max_fee_usd: '0', expirySec: r.signature_expiry_sec }
  const fromFunding = (to: number, newManager: number, terms = {}) =>
    signSpot(port, { ...common, ...terms, from: funding, to, newManager }, (sub, module, data, expiry) =>
      order.inTurn(funding, () => port.sign(sub, module, data, expiry)),
    )
  const signed =
    r.method === 'withdraw'
      ? await signSpot(port, { ...common, from: r.subaccount_id, to: funding, newManager: 0 })
      : r.method === 'deposit'
        ? await fromFunding(r.subaccount_id, 0)
        : await fromFunding(
            0,
            await managerIdOf(port, r.currency ?? r.asset_name, r.margin_type),
            await creationTerms(port, r.asset_name, r.amount),
          )
  return { method: r.method, params: { ...signed.params, nonce: signed.nonce.toString() } }
}

/** Sends a stored movement exactly as signed (never retried: it may have landed). */
export async function sendMovement(port: V3Port, order: SendOrder, action: SignedTransfer): Promise<T.TxResult> {
  const p = action.params as unknown as Omit<W.PrivateTransferSpotRequest, 'nonce'> & { nonce: string | number }
  if (typeof p.new_subaccount_manager !== 'number' || typeof p.to_subaccount_id !== 'number')
    throw new V3UnsupportedError(
      `a ${action.method} stored under v2`,
      'Derive retired v2; settle or fail it by hand after checking the exchange',
    )
  const nonce = String(p.nonce)
  try {
    const r = await port.call('private/transfer_spot', { ...p, nonce: exactInteger(BigInt(nonce)) })
    return { status: 'pending', transaction_id: r.op_uuid }
  } finally {
    order.sent(nonce)
  }
}

export interface TransferSpotRequest {
  subaccount_id: number
  to_subaccount_id: number
  asset_name: string
  amount: string
  /** the most the exchange may charge for the move, in USD; defaults to 0 (a fee would come out of the amount) */
  max_fee_usd?: string
}

/** Moves collateral between two subaccounts of the owner, signed and sent at once. */
export async function transferSpot(port: V3Port, p: TransferSpotRequest): Promise<W.PrivateTransferSpotResponse> {
  const move = { from: p.subaccount_id, to: p.to_subaccount_id, newManager: 0, max_fee_usd: p.max_fee_usd ?? '0' }
  const { nonce, params } = await signSpot(port, { ...move, asset_name: p.asset_name, amount: p.amount })
  return port.call('private/transfer_spot', { ...params, nonce: exactInteger(nonce) })
}

export interface WithdrawL1Request {
  subaccount_id: number
  asset_name: string
  /** a decimal in the asset; signed in its native decimals */
  amount: string
  /** the most the sequencer may charge, in USD (the spec's `max_fee_usd`, required) */
  max_fee_usd: string
  /** the L1 payout address; defaults to the owner (a session key may pay only whitelisted ones) */
  recipient?: Address
  force_batch?: boolean
}

/** The signed `private/withdraw` params, the nonce as a decimal string (stored as JSON before sending). */
export type SignedL1Withdrawal = Omit<W.PrivateWithdrawRequest, 'nonce'> & { nonce: string }

/** Signs a withdrawal's data with `sign` (the subaccount's one signature) and returns the request, not sent. */
async function signWithdrawal(
  port: V3Port,
  p: WithdrawL1Request,
  sign: V3Port['sign'] = port.sign.bind(port),
): Promise<SignedL1Withdrawal> {
  const { address, decimals } = await spotAssetOf(port, p.asset_name)
  const recipient = p.recipient ?? port.wallet
  const force_batch = p.force_batch ?? false
  const data: Hex = encodeWithdrawalDataV3({
    asset: address,
    maxFeeUsdE18: toE18(p.max_fee_usd),
    recipient,
    amountUnits: toUnits(p.amount, decimals),
    forceBatch: force_batch,
  })
  const s = await sign(p.subaccount_id, V3_MODULES.withdrawal, data)
  return {
    subaccount_id: p.subaccount_id,
    asset_name: p.asset_name,
    amount_in_underlying: p.amount,
    max_fee_usd: p.max_fee_usd,
    force_batch,
    recipient,
    nonce: s.nonce.toString(),
    signer: s.signer,
    signature: s.signature,
    signature_expiry_sec: s.signature_expiry_sec,
  }
}

/** `private/withdraw`: pays out of a subaccount on L1, signed and sent at once. */
export async function withdrawToL1(port: V3Port, p: WithdrawL1Request): Promise<W.PrivateWithdrawResponse> {
  const signed = await signWithdrawal(port, p)
  return port.call('private/withdraw', { ...signed, nonce: exactInteger(BigInt(signed.nonce)) })
}

/**
 * A withdrawal out of the funding subaccount (the treasury's, docs/exchange-v3.md "Money out"), signed in
 * the funding subaccount's nonce order and not sent: the caller stores it first.
 */
export function signFundingWithdrawal(
  port: V3Port,
  order: SendOrder,
  p: Omit<WithdrawL1Request, 'subaccount_id'>,
): Promise<SignedL1Withdrawal> {
  const funding = fundingSubaccountOf(port)
  return signWithdrawal(port, { ...p, subaccount_id: funding }, (sub, module, data, expiry) =>
    order.inTurn(funding, () => port.sign(sub, module, data, expiry)),
  )
}

/** Sends a stored withdrawal exactly as signed (never retried: it may have landed); its operation uuid. */
export async function sendFundingWithdrawal(
  port: V3Port,
  order: SendOrder,
  signed: SignedL1Withdrawal,
): Promise<W.PrivateWithdrawResponse> {
  try {
    return await port.call('private/withdraw', { ...signed, nonce: exactInteger(BigInt(signed.nonce)) })
  } finally {
    order.sent(signed.nonce)
  }
}
