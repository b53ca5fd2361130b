/**
 * The Derive client (docs/exchange.md): public reads, authenticated private reads, and signed
 * actions (orders, transfers between the platform's subaccounts, L1 withdrawals) for one owner
 * acting through its session key, on Derive's v3 protocol (docs/exchange-v3.md).
 *
 * `wallet` is the owner's own L1 address (EOA or multisig) and signs nothing itself: the session
 * key signs each action under the v3 domain with a nanosecond nonce. Requests are typed by the
 * published spec (../v3/wire.gen.ts); answers are translated into the shapes the service reads
 * (../protocol/types.ts, via ../v3/adapt.ts and ../v3/adapt-history.ts). The worker's movements
 * are transfer_spot with the platform's funding subaccount (../v3/movements.ts); their histories
 * read v3's (../v3/histories.ts).
 */
import type { Address, Hex } from 'viem'
import { signV3Action } from '../protocol/action'
import { type AuthProof, signAuthProof } from '../protocol/auth-message'
import { V3_MODULES } from '../protocol/constants'
import { fromE18, toE18 } from '../protocol/decimal'
import { ceilToE12, encodeTradeDataV3 } from '../protocol/module-data'
import { NanosecondNonceGenerator } from '../protocol/nonce'
import type * as T from '../protocol/types'
import * as A from '../v3/adapt'
import { orderDebugOf } from '../v3/adapt-history'
import type { V3MethodName } from '../v3/codegen'
import * as H from '../v3/histories'
import * as M from '../v3/movements'
import type { SignedV3, V3Port } from '../v3/port'
import * as P from '../v3/public'
import type * as W from '../v3/wire.gen'
import { DutyKeys } from './duty-keys'
import type { ExchangeError } from './errors'
import { HttpTransport } from './http-transport'
import { KeyRing } from './key-ring'
import {
  type PreparedOwnerAction,
  prepareSetSessionKey,
  prepareWhitelist,
  type SessionKeyGrantRequest,
  signedOwnerAction,
} from './owner-actions'
import {
  DEFAULT_SIGNATURE_TTL_SEC,
  type DeriveClientOptions,
  type HistoryWindow,
  type OrderRequest,
  type SignedTransfer,
  type TickerUpdate,
  type TransferRequest,
  tradeDataOf,
  V3_AMOUNT_DECIMALS,
} from './requests'
import { DeriveWsClient } from './ws-client'

export type { SignedL1Withdrawal, TransferSpotRequest, WithdrawL1Request } from '../v3/movements'
export { V3UnsupportedError } from '../v3/port'
export * from './duties'
export * from './key-ring'
export * from './owner-actions'
export * from './requests'

export class DeriveClient {
  readonly wallet: Address
  readonly fundingSubaccountId: number | undefined
  readonly #http: HttpTransport
  readonly #opts: DeriveClientOptions
  readonly #nowMs: () => number
  readonly #nonces: NanosecondNonceGenerator
  /** the trading keys (SESSION_PRIVATE_KEY, …_NEXT) and the payout keys (EXCHANGE_PAYOUT_SESSION_KEY, …_NEXT) */
  readonly #keys: DutyKeys
  readonly #instruments = new Map<string, T.Instrument>()
  readonly #currencies = new Map<string, { wire: W.Currency; ours: T.Currency }>()
  readonly #sendOrder = new M.SendOrder()
  readonly #port: V3Port
  readonly #publicCall: P.PublicCall = (name, params) => this.publicCall(name, params)

  /** `httpUrl` is the v3 base (…/v3), `wsUrl` its socket (…/v3/ws), `wallet` the owner, `chainId` the v3 domain's. */
  constructor(opts: DeriveClientOptions) {
    this.wallet = opts.wallet
    this.#opts = opts
    this.fundingSubaccountId = opts.fundingSubaccountId
    const clock = opts.clock
    this.#nowMs = () => (clock ? clock.now().getTime() : Date.now())
    this.#nonces = new NanosecondNonceGenerator(this.#nowMs)
    const trading = new KeyRing(opts.sessionKey)
    const payout = opts.payoutSessionKey ? new KeyRing(opts.payoutSessionKey) : trading
    this.#http = new HttpTransport({
      baseUrl: opts.httpUrl,
      ...(opts.timeoutMs !== undefined && { timeoutMs: opts.timeoutMs }),
      ...(opts.retry && { retry: opts.retry }),
      ...(opts.logger && { logger: opts.logger }),
      ...(opts.fetch && { fetch: opts.fetch }),
      ...(opts.sleep && { sleep: opts.sleep }),
    })
    this.#keys = new DutyKeys(trading, payout, { wallet: this.wallet, nowMs: this.#nowMs, http: this.#http })
    this.#port = {
      wallet: this.wallet,
      fundingSubaccountId: opts.fundingSubaccountId,
      creationFeeCapUsd: opts.subaccountCreationFeeCapUsd ?? '0',
      call: (method, params) => this.#wire(method, params),
      sign: (sub, module, data, expirySec) => this.#sign(sub, module, data, expirySec),
      wireCurrency: async (currency) => (await this.#currency(currency)).wire,
      assetName: (asset) => {
        if (!/^0x[0-9a-fA-F]{40}$/.test(asset)) return asset
        for (const [name, c] of this.#currencies)
          if (c.wire.spot.some((s) => s.address.toLowerCase() === asset.toLowerCase())) return name
        return asset
      },
    }
  }

  // ---- transport -------------------------------------------------------------------------

  /** Calls any public method. Reads are retried on transport failures. */
  publicCall<T>(method: string, params: object = {}): Promise<T> {
    return this.#http.call<T>(`public/${method}`, params, { idempotent: isRead(method) })
  }

  /**
   * Calls any private method with fresh auth headers, signed by the key of the method's duty (a
   * withdrawal's by the payout key, everything else by the trading key); only reads (`get_*`) are
   * retried. A refusal naming the key (unknown, expired) makes the ring read the registrations again.
   */
  async privateCall<T>(method: string, params: object = {}): Promise<T> {
    const ring = this.#keys.ofMethod(method)
    const privateKey = (await this.#keys.key(ring)).privateKey
    try {
      return await this.#http.call<T>(`private/${method}`, params, {
        idempotent: isRead(method),
        headers: () => this.#keys.headers(privateKey),
      })
    } catch (e) {
      if (KEY_REFUSALS.has((e as ExchangeError).rpcCode ?? 0)) ring.invalidate()
      throw e
    }
  }

  /** The three auth headers for one request, signed now by the trading key. */
  async authHeaders(): Promise<Record<string, string>> {
    return this.#keys.headers((await this.#keys.key(this.#keys.trading)).privateKey)
  }

  async authProof(): Promise<AuthProof> {
    return signAuthProof(this.wallet, (await this.#keys.key(this.#keys.trading)).privateKey, this.#nowMs())
  }

  /** The keys the client signs with now, per duty (a renewal moves them: key-ring.ts). */
  async signingKeys(): Promise<{ trading: Address; payout: Address }> {
    const { trading, payout } = this.#keys
    return { trading: (await this.#keys.key(trading)).address, payout: (await this.#keys.key(payout)).address }
  }

  /** One v3 method, typed by the generated wire types. */
  #wire<M extends V3MethodName>(method: M, params: W.V3Wire[M]['params']): Promise<W.V3Wire[M]['result']> {
    const [scope, name] = method.split('/') as ['public' | 'private', string]
    const body = (params ?? null) as object
    return scope === 'public' ? this.publicCall(name, body) : this.privateCall(name, body)
  }

  /**
   * Signs an action with the key of its duty (a withdrawal: the payout key; anything else: the trading
   * key). An expiry the caller does not give is now + the TTL, kept within the key's own life (Derive
   * refuses an order that outlives its key).
   */
  async #sign(subaccountId: number, module: Address, data: Hex, expirySec?: number): Promise<SignedV3> {
    const ring = this.#keys.ofModule(module)
    const key = await this.#keys.key(ring)
    const nonce = this.#nonces.next()
    const ttl = this.#opts.signatureTtlSec ?? DEFAULT_SIGNATURE_TTL_SEC
    const keyExpiry = ring.expiryOf(key.address)
    const signature_expiry_sec =
      expirySec ?? Math.min(Math.floor(this.#nowMs() / 1000) + ttl, keyExpiry ?? Number.MAX_SAFE_INTEGER)
    const action = {
      subaccountId: BigInt(subaccountId),
      nonce,
      module,
      data,
      expirySec: BigInt(signature_expiry_sec),
      owner: this.wallet,
      signer: key.address,
    }
    const signature = await signV3Action(action, { chainId: this.#opts.chainId }, key.privateKey)
    return { nonce, signer: key.address, signature, signature_expiry_sec }
  }

  /** Opens the v3 WebSocket and logs in with the owner as wallet; the caller closes it. */
  async connectWs(opts: { login?: boolean } = {}): Promise<DeriveWsClient> {
    if (!this.#opts.wsUrl) throw new Error('wsUrl not configured')
    const ws = await DeriveWsClient.connect(this.#opts.wsUrl, {
      ...(this.#opts.logger && { logger: this.#opts.logger }),
    })
    if (opts.login !== false) await ws.login(await this.authProof())
    return ws
  }

  /** v3's `ticker_slim.{name}.{ms}` channel, each snapshot spread over the (cached) instrument into the service's ticker. */
  async subscribeTicker(
    ws: DeriveWsClient,
    instrument_name: string,
    intervalMs: 100 | 1000,
    onTicker: (u: TickerUpdate) => void,
  ): Promise<() => Promise<void>> {
    const inst = await this.getInstrument(instrument_name)
    return ws.subscribe([`ticker_slim.${instrument_name}.${intervalMs}`], (_channel, data) => {
      const d = data as { timestamp?: number; instrument_ticker?: W.TickerSlimSnapshot } | null
      if (d?.instrument_ticker)
        onTicker({ timestamp: d.timestamp ?? d.instrument_ticker.t, ticker: A.tickerFromV3(inst, d.instrument_ticker) })
    })
  }

  // ---- public reads ----------------------------------------------------------------------

  getTime(): Promise<number> {
    return this.#wire('public/get_time', null)
  }

  /** Every page of `public/get_all_instruments` (v3 dropped `public/get_instruments`). */
  getInstruments(p: {
    currency: string
    instrument_type: T.InstrumentType
    expired?: boolean
  }): Promise<T.Instrument[]> {
    return P.v3Instruments(this.#publicCall, p)
  }

  async getInstrument(instrument_name: string): Promise<T.Instrument> {
    const hit = this.#instruments.get(instrument_name)
    if (hit) return hit
    const inst = await P.v3Instrument(this.#publicCall, instrument_name)
    this.#instruments.set(instrument_name, inst)
    return inst
  }

  /** The slim v3 ticker with its (cached) instrument's fields, in the service's ticker shape. */
  async getTicker(instrument_name: string): Promise<T.Ticker> {
    return P.v3Ticker(this.#publicCall, await this.getInstrument(instrument_name))
  }

  /** v3 refuses amounts finer than 12 decimals (docs/exchange-v3.md "Nonces, expiries and number formats"). */
  amountStepUnits(decimals: number): bigint {
    return decimals > V3_AMOUNT_DECIMALS ? 10n ** BigInt(decimals - V3_AMOUNT_DECIMALS) : 1n
  }

  async getCurrency(currency: string): Promise<T.Currency> {
    return (await this.#currency(currency)).ours
  }

  async #currency(currency: string): Promise<{ wire: W.Currency; ours: T.Currency }> {
    const hit = this.#currencies.get(currency)
    if (hit) return hit
    const wire = await this.#wire('public/get_currency', { currency })
    const c = { wire, ours: A.currencyFromV3(wire) }
    this.#currencies.set(currency, c)
    return c
  }

  /** A movement's settlement by the operation uuid sendSigned answered (its batch's status). */
  getTransaction(op_uuid: string): Promise<{ status: string; data: unknown }> {
    return H.transaction(this.#port, op_uuid)
  }

  // ---- private reads ---------------------------------------------------------------------

  getSubaccounts(): Promise<{ wallet: string; subaccount_ids: number[] }> {
    return this.#wire('private/get_subaccounts', { wallet: this.wallet })
  }

  async getSubaccount(subaccount_id: number): Promise<T.Subaccount> {
    return A.subaccountFromV3(await this.#wire('private/get_subaccount', { subaccount_id }))
  }

  async getAllPortfolios(): Promise<Array<T.Subaccount & { failed_to_fetch?: boolean }>> {
    return (await this.#wire('private/get_all_portfolios', { wallet: this.wallet })).map(A.subaccountFromV3)
  }

  async getCollaterals(subaccount_id: number): Promise<T.Collateral[]> {
    return (await this.#wire('private/get_collaterals', { subaccount_id })).collaterals.map(A.collateralFromV3)
  }

  async getPositions(subaccount_id: number): Promise<T.Position[]> {
    return (await this.#wire('private/get_positions', { subaccount_id })).positions.map(A.positionFromV3)
  }

  async getOpenOrders(subaccount_id: number): Promise<{ subaccount_id: number; orders: T.Order[] }> {
    const r = await this.#wire('private/get_open_orders', { subaccount_id })
    return { subaccount_id: r.subaccount_id, orders: r.orders.map(A.orderFromV3) }
  }

  async getOrder(subaccount_id: number, order_id: string): Promise<T.Order> {
    return A.orderFromV3(await this.#wire('private/get_order', { subaccount_id, order_id }))
  }

  async getTradeHistory(p: {
    subaccount_id: number
    from_timestamp?: number
    to_timestamp?: number
    page?: number
    page_size?: number
  }): Promise<{ subaccount_id: number; trades: T.Trade[]; pagination: T.Pagination }> {
    const r = await this.#wire('private/get_trade_history', p)
    return { subaccount_id: r.subaccount_id, trades: r.trades.map(A.tradeFromV3), pagination: r.pagination }
  }

  // ---- signed actions --------------------------------------------------------------------

  /**
   * Signs an order under the v3 domain (nanosecond nonce, sent as the string the spec types). Its
   * max fee, a ceiling the worker computes in e18, is rounded up to v3's 12 places.
   */
  async #signedOrder(o: OrderRequest): Promise<W.CreateOrderRequest> {
    const p = { ...o, max_fee: fromE18(ceilToE12(toE18(o.max_fee))) }
    const inst = await this.getInstrument(p.instrument_name)
    const data = encodeTradeDataV3(tradeDataOf(inst, p))
    const { signature_expiry_sec, ...order } = p
    const s = await this.#sign(p.subaccount_id, V3_MODULES.trade, data, signature_expiry_sec)
    return {
      order_type: 'limit',
      time_in_force: 'gtc',
      ...order,
      nonce: s.nonce.toString(),
      signer: s.signer,
      signature: s.signature,
      signature_expiry_sec: s.signature_expiry_sec,
    }
  }

  /** The signed params of an order, exposed so a test can tamper with them. */
  async signedOrderParams(p: OrderRequest): Promise<Record<string, unknown>> {
    return { ...(await this.#signedOrder(p)) }
  }

  async order(p: OrderRequest): Promise<{ order: T.Order; trades: T.Trade[] }> {
    const r = await this.#wire('private/order', await this.#signedOrder(p))
    return { order: A.orderFromV3(r.order), trades: r.trades.map(A.tradeFromV3) }
  }

  async cancel(p: { subaccount_id: number; instrument_name: string; order_id: string }): Promise<T.Order> {
    return A.orderFromV3(await this.#wire('private/cancel', p))
  }

  cancelAll(subaccount_id: number): Promise<string> {
    return this.#wire('private/cancel_all', { subaccount_id })
  }

  /** What the exchange rebuilds from an order's params: encoded data, action hash, typed-data hash (v3 extras in raw_data). */
  async orderDebug(p: OrderRequest): Promise<T.OrderDebugResult> {
    return orderDebugOf(await this.#wire('private/order_debug', await this.#signedOrder(p)))
  }

  // ---- movements (./movements.ts) --------------------------------------------------------

  /** The worker's movement signed as a transfer_spot with the funding subaccount, not sent (store it first). */
  signTransfer(r: TransferRequest): Promise<SignedTransfer> {
    return M.signMovement(this.#port, this.#sendOrder, r)
  }

  /** Sends a stored movement as it was signed; the operation uuid stands for the transaction id. */
  sendSigned(action: SignedTransfer): Promise<T.TxResult> {
    return M.sendMovement(this.#port, this.#sendOrder, action)
  }

  /** v3 has no private/create_subaccount: a transfer_spot out of the funding subaccount under a manager creates one. */
  async createSubaccount(p: {
    asset_name: string
    amount: string
    margin_type?: 'SM' | 'PM' | 'PM2'
    currency?: string
  }): Promise<T.TxResult> {
    return this.sendSigned(await this.signTransfer({ method: 'create_subaccount', ...p }))
  }

  /** Funds a subaccount from the funding subaccount. */
  async deposit(p: { subaccount_id: number; asset_name: string; amount: string }): Promise<T.TxResult> {
    return this.sendSigned(await this.signTransfer({ method: 'deposit', ...p }))
  }

  /** Moves collateral back to the funding subaccount. L1 payouts are `withdrawToL1`. */
  async withdraw(p: { subaccount_id: number; asset_name: string; amount: string }): Promise<T.TxResult> {
    return this.sendSigned(await this.signTransfer({ method: 'withdraw', ...p }))
  }

  /** Moves collateral between two subaccounts of the owner: one signature, the sender's (v3's transfer_spot). */
  transferSpot(p: M.TransferSpotRequest): Promise<W.PrivateTransferSpotResponse> {
    return M.transferSpot(this.#port, p)
  }

  /** `private/withdraw`: an L1 payout out of a subaccount, with the sequencer fee cap v3 requires. */
  withdrawToL1(p: M.WithdrawL1Request): Promise<W.PrivateWithdrawResponse> {
    return M.withdrawToL1(this.#port, p)
  }

  /** An L1 payout out of the funding subaccount, signed in its nonce order, not sent (the treasury stores it first). */
  signFundingWithdrawal(p: Omit<M.WithdrawL1Request, 'subaccount_id'>): Promise<M.SignedL1Withdrawal> {
    return M.signFundingWithdrawal(this.#port, this.#sendOrder, p)
  }

  /** Sends a stored funding-subaccount withdrawal as it was signed; the exchange's operation uuid. */
  sendFundingWithdrawal(signed: M.SignedL1Withdrawal): Promise<W.PrivateWithdrawResponse> {
    return M.sendFundingWithdrawal(this.#port, this.#sendOrder, signed)
  }

  // ---- session keys and the whitelist (./owner-actions.ts) -------------------------------

  /** Every key registered to the owner, expired ones included (`private/session_keys`). */
  async sessionKeys(): Promise<W.SessionKey[]> {
    return (await this.#wire('private/session_keys', { wallet: this.wallet })).public_session_keys
  }

  /** The account: its subaccounts, whitelisted recipients and rate limits (`private/get_account`). */
  getAccount(): Promise<W.PrivateGetAccountResponse> {
    return this.#wire('private/get_account', { wallet: this.wallet })
  }

  /** Patches a key's label (any reader), IP list or off-chain scopes (the owner or an admin key). */
  editSessionKey(p: { key: Address; label?: string; ipWhitelist?: string[]; offchainScopes?: string[] }) {
    return this.#wire('private/edit_session_key', {
      wallet: this.wallet,
      public_session_key: p.key,
      ...(p.label !== undefined && { label: p.label }),
      ...(p.ipWhitelist !== undefined && { ip_whitelist: p.ipWhitelist }),
      ...(p.offchainScopes !== undefined && { offchain_scopes: p.offchainScopes }),
    })
  }

  /** A key's registration for the owner to sign (an operator; docs/operations.md "Exchange session keys"). */
  prepareSetSessionKey(g: SessionKeyGrantRequest): PreparedOwnerAction {
    return prepareSetSessionKey(g, this.#envelope())
  }

  /** A whitelist change for the owner to sign. */
  prepareWhitelist(change: { add?: readonly Address[]; remove?: readonly Address[] }): PreparedOwnerAction {
    return prepareWhitelist(change, this.#envelope())
  }

  /** Sends a prepared action with the owner's signature (checked to be the owner's first). */
  async submitOwnerAction(p: PreparedOwnerAction, signature: Hex): Promise<unknown> {
    if (p.owner.toLowerCase() !== this.wallet.toLowerCase())
      throw new Error(`prepared for ${p.owner}, not ${this.wallet}`)
    const params = await signedOwnerAction(p, signature)
    return this.privateCall(p.kind, params)
  }

  #envelope() {
    return { owner: this.wallet, chainId: this.#opts.chainId, nonce: this.#nonces.next(), nowMs: this.#nowMs() }
  }

  // ---- histories (./histories.ts) --------------------------------------------------------

  /** Transfers into the subaccount from the funding subaccount (the worker's fundings), as deposit events. */
  getDepositHistory(p: HistoryWindow): Promise<{ events: T.DepositEvent[] }> {
    return H.depositHistory(this.#port, p)
  }

  /** Transfers from the subaccount to the funding subaccount (releases, fee collections), as withdrawal events. */
  getWithdrawalHistory(p: HistoryWindow): Promise<{ events: T.WithdrawalEvent[] }> {
    return H.withdrawalHistory(this.#port, p)
  }

  /** The in-kind fee of a movement out of the funding subaccount: its row in the sender's transfer history. */
  movementFee(p: { transaction_id: string; start_timestamp: number }): Promise<string | null> {
    return H.movementFee(this.#port, p)
  }

  getErc20TransferHistory(p: HistoryWindow): Promise<{ events: T.Erc20TransferEvent[] }> {
    return H.transferHistory(this.#port, p)
  }

  /** L1 deposits (`private/get_deposit_history`): how the funding subaccount is topped up. */
  getL1DepositHistory(p: HistoryWindow): ReturnType<typeof H.l1DepositHistory> {
    return H.l1DepositHistory(this.#port, p)
  }

  /** L1 withdrawals (`private/get_withdrawal_history`). */
  getL1WithdrawalHistory(p: HistoryWindow): ReturnType<typeof H.l1WithdrawalHistory> {
    return H.l1WithdrawalHistory(this.#port, p)
  }

  getInterestHistory(p: HistoryWindow): Promise<{ events: T.InterestEvent[] }> {
    return H.interestHistory(this.#port, p)
  }

  getFundingHistory(
    p: HistoryWindow & { instrument_name?: string; page?: number; page_size?: number },
  ): Promise<{ events: T.FundingEvent[]; pagination: T.Pagination }> {
    return H.fundingHistory(this.#port, p)
  }

  getOptionSettlementHistory(
    subaccount_id: number,
  ): Promise<{ subaccount_id: number; settlements: T.OptionSettlement[] }> {
    return H.optionSettlementHistory(this.#port, subaccount_id)
  }
}

/** Refusals that name the signing key: unknown (14026), expired (14030), not the owner's nor registered (14023). */
const KEY_REFUSALS = new Set([14023, 14026, 14030])

/** Reads are safe to repeat; everything else might have landed on the first try. */
function isRead(method: string): boolean {
  return method.startsWith('get_') || method === 'order_debug'
}
