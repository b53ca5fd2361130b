/**
 * The Derive client on the v3 protocol (docs/exchange-v3.md "What the client does on v3"): the
 * same surface as the v2 `DeriveClient` (it extends it, so the worker takes either; deps.ts picks
 * one by EXCHANGE_PROTOCOL), with v3 underneath. `wallet` is the owner's own address (L1 EOA or
 * multisig; no Derive Wallet) and signs nothing itself: the session key signs each action under
 * the v3 domain with a nanosecond nonce. Answers are translated to the v2 shapes the service reads
 * (./adapt.ts, ./adapt-history.ts); requests are the spec's (./wire.gen.ts). The worker's
 * movements become transfer_spot with the platform's funding subaccount (./movements.ts), its
 * history reads v3's histories (./histories.ts). What v3 has no equivalent for (a stored v2
 * movement) is refused with V3UnsupportedError, not faked.
 */
import { type Address, type Hex, zeroAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { DEFAULT_SIGNATURE_TTL_SEC } from '../client/action-signer'
import {
  DeriveClient,
  type DeriveClientOptions,
  type HistoryWindow,
  type OrderRequest,
  type SignedTransfer,
  type TickerUpdate,
  type TransferRequest,
  tradeDataOf,
} from '../client/derive-client'
import { DeriveWsClient } from '../client/ws-client'
import { fromE18, toE18 } from '../protocol/decimal'
import type * as T from '../protocol/types'
import { signV3Action } from '../protocol/v3/action'
import { V3_MATCHING_VERIFYING_CONTRACT, V3_MODULES } from '../protocol/v3/constants'
import { ceilToE12, encodeTradeDataV3 } from '../protocol/v3/module-data'
import { NanosecondNonceGenerator } from '../protocol/v3/nonce'
import * as A from './adapt'
import { orderDebugOf } from './adapt-history'
import type { V3MethodName } from './codegen'
import * as H from './histories'
import * as M from './movements'
import type { SignedV3, V3Port } from './port'
import * as P from './public'
import type * as W from './wire.gen'

export type { SignedL1Withdrawal, TransferSpotRequest, WithdrawL1Request } from './movements'
export { V3UnsupportedError } from './port'

export interface DeriveV3ClientOptions extends DeriveClientOptions {
  /**
   * The platform's own subaccount that holds its funds at the exchange (EXCHANGE_FUNDING_SUBACCOUNT_ID):
   * fundings are transfers out of it, releases and fee collections transfers into it. Without it
   * the movements and their histories are refused.
   */
  fundingSubaccountId?: number
  /**
   * The most a subaccount's creation may cost, in USD (EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD); `0` (the default)
   * signs creations with no fee, which Derive refuses (docs/exchange-v3.md "Movements on v3").
   */
  subaccountCreationFeeCapUsd?: string
}

/** What the inherited v2 signer would name: the v3 domain and modules (the client signs through its own path). */
const V3_CONTRACTS = {
  matching: V3_MATCHING_VERIFYING_CONTRACT,
  tradeModule: V3_MODULES.trade,
  transferModule: V3_MODULES.transfer,
  withdrawalModule: V3_MODULES.withdrawal,
  depositModule: zeroAddress,
  standardManager: zeroAddress,
}

/** The finest amount v3 takes: 12 decimal places. */
export const V3_AMOUNT_DECIMALS = 12

export class DeriveV3Client extends DeriveClient {
  readonly protocol = 'v3' as const
  readonly fundingSubaccountId: number | undefined
  readonly #opts: DeriveV3ClientOptions
  readonly #nowMs: () => number
  readonly #nonces: NanosecondNonceGenerator
  readonly #signer: Address
  readonly #instruments = new Map<string, T.Instrument>()
  readonly #currencies = new Map<string, { wire: W.Currency; v2: T.Currency }>()
  readonly #sendOrder = new M.SendOrder()
  readonly #port: V3Port
  readonly #publicCall: P.PublicCall = (name, params) => this.publicCall(name, params)

  /** `httpUrl` is the v3 base (…/v3), `wsUrl` its socket (…/v3/ws), `wallet` the owner, `chainId` the v3 domain's. */
  constructor(opts: DeriveV3ClientOptions) {
    super({ ...opts, contracts: opts.contracts ?? V3_CONTRACTS })
    this.#opts = opts
    this.fundingSubaccountId = opts.fundingSubaccountId
    const clock = opts.clock
    this.#nowMs = () => (clock ? clock.now().getTime() : Date.now())
    this.#nonces = new NanosecondNonceGenerator(this.#nowMs)
    this.#signer = privateKeyToAccount(opts.sessionKey).address
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

  /** One v3 method, typed by the generated wire types. */
  #wire<M extends V3MethodName>(method: M, params: W.V3Wire[M]['params']): Promise<W.V3Wire[M]['result']> {
    const [scope, name] = method.split('/') as ['public' | 'private', string]
    const body = (params ?? null) as object
    return scope === 'public' ? this.publicCall(name, body) : this.privateCall(name, body)
  }

  async #sign(subaccountId: number, module: Address, data: Hex, expirySec?: number): Promise<SignedV3> {
    const nonce = this.#nonces.next()
    const ttl = this.#opts.signatureTtlSec ?? DEFAULT_SIGNATURE_TTL_SEC
    const signature_expiry_sec = expirySec ?? Math.floor(this.#nowMs() / 1000) + ttl
    const action = {
      subaccountId: BigInt(subaccountId),
      nonce,
      module,
      data,
      expirySec: BigInt(signature_expiry_sec),
      owner: this.wallet,
      signer: this.#signer,
    }
    const signature = await signV3Action(action, { chainId: this.#opts.chainId }, this.#opts.sessionKey)
    return { nonce, signer: this.#signer, signature, signature_expiry_sec }
  }

  /** Opens the v3 WebSocket and logs in with the owner as wallet; the caller closes it. */
  override async connectWs(opts: { login?: boolean } = {}): Promise<DeriveWsClient> {
    if (!this.#opts.wsUrl) throw new Error('wsUrl not configured')
    const ws = await DeriveWsClient.connect(this.#opts.wsUrl, {
      ...(this.#opts.logger && { logger: this.#opts.logger }),
    })
    if (opts.login !== false) {
      const p = await this.authProof()
      await ws.call('public/login', { wallet: p.wallet, timestamp: Number(p.timestamp), signature: p.signature })
    }
    return ws
  }

  /** v3's `ticker_slim.{name}.{ms}` channel, each snapshot spread over the (cached) instrument into the v2 ticker. */
  override async subscribeTicker(
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

  override getTime(): Promise<number> {
    return this.#wire('public/get_time', null)
  }

  /** Every page of `public/get_all_instruments` (v3 dropped `public/get_instruments`). */
  override getInstruments(p: {
    currency: string
    instrument_type: T.InstrumentType
    expired?: boolean
  }): Promise<T.Instrument[]> {
    return P.v3Instruments(this.#publicCall, p)
  }

  override async getInstrument(instrument_name: string): Promise<T.Instrument> {
    const hit = this.#instruments.get(instrument_name)
    if (hit) return hit
    const inst = await P.v3Instrument(this.#publicCall, instrument_name)
    this.#instruments.set(instrument_name, inst)
    return inst
  }

  /** The slim v3 ticker with its (cached) instrument's fields, in the v2 ticker's shape. */
  override async getTicker(instrument_name: string): Promise<T.Ticker> {
    return P.v3Ticker(this.#publicCall, await this.getInstrument(instrument_name))
  }

  /** v3 refuses amounts finer than 12 decimals (docs/exchange-v3.md "Nonces, expiries and number formats"). */
  override amountStepUnits(decimals: number): bigint {
    return decimals > V3_AMOUNT_DECIMALS ? 10n ** BigInt(decimals - V3_AMOUNT_DECIMALS) : 1n
  }

  override async getCurrency(currency: string): Promise<T.Currency> {
    return (await this.#currency(currency)).v2
  }

  async #currency(currency: string): Promise<{ wire: W.Currency; v2: T.Currency }> {
    const hit = this.#currencies.get(currency)
    if (hit) return hit
    const wire = await this.#wire('public/get_currency', { currency })
    const c = { wire, v2: A.currencyFromV3(wire) }
    this.#currencies.set(currency, c)
    return c
  }

  /** A movement's settlement by the operation uuid sendSigned answered (batch status as v2's transaction status). */
  override getTransaction(op_uuid: string): Promise<{ status: string; data: unknown }> {
    return H.transaction(this.#port, op_uuid)
  }

  // ---- private reads ---------------------------------------------------------------------

  override getSubaccounts(): Promise<{ wallet: string; subaccount_ids: number[] }> {
    return this.#wire('private/get_subaccounts', { wallet: this.wallet })
  }

  override async getSubaccount(subaccount_id: number): Promise<T.Subaccount> {
    return A.subaccountFromV3(await this.#wire('private/get_subaccount', { subaccount_id }))
  }

  override async getAllPortfolios(): Promise<Array<T.Subaccount & { failed_to_fetch?: boolean }>> {
    return (await this.#wire('private/get_all_portfolios', { wallet: this.wallet })).map(A.subaccountFromV3)
  }

  async getCollaterals(subaccount_id: number): Promise<T.Collateral[]> {
    return (await this.#wire('private/get_collaterals', { subaccount_id })).collaterals.map(A.collateralFromV3)
  }

  async getPositions(subaccount_id: number): Promise<T.Position[]> {
    return (await this.#wire('private/get_positions', { subaccount_id })).positions.map(A.positionFromV3)
  }

  override async getOpenOrders(subaccount_id: number): Promise<{ subaccount_id: number; orders: T.Order[] }> {
    const r = await this.#wire('private/get_open_orders', { subaccount_id })
    return { subaccount_id: r.subaccount_id, orders: r.orders.map(A.orderFromV3) }
  }

  override async getOrder(subaccount_id: number, order_id: string): Promise<T.Order> {
    return A.orderFromV3(await this.#wire('private/get_order', { subaccount_id, order_id }))
  }

  override async getTradeHistory(p: {
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
  override async signedOrderParams(p: OrderRequest): Promise<Record<string, unknown>> {
    return { ...(await this.#signedOrder(p)) }
  }

  override async order(p: OrderRequest): Promise<{ order: T.Order; trades: T.Trade[] }> {
    const r = await this.#wire('private/order', await this.#signedOrder(p))
    return { order: A.orderFromV3(r.order), trades: r.trades.map(A.tradeFromV3) }
  }

  override async cancel(p: { subaccount_id: number; instrument_name: string; order_id: string }): Promise<T.Order> {
    return A.orderFromV3(await this.#wire('private/cancel', p))
  }

  override cancelAll(subaccount_id: number): Promise<string> {
    return this.#wire('private/cancel_all', { subaccount_id })
  }

  /** What the exchange rebuilds from an order's params: encoded data, action hash, typed-data hash (v3 extras in raw_data). */
  override async orderDebug(p: OrderRequest): Promise<T.OrderDebugResult> {
    return orderDebugOf(await this.#wire('private/order_debug', await this.#signedOrder(p)))
  }

  // ---- movements (./movements.ts) --------------------------------------------------------

  /** The worker's movement signed as a transfer_spot with the funding subaccount, not sent (store it first). */
  override signTransfer(r: TransferRequest): Promise<SignedTransfer> {
    return M.signMovement(this.#port, this.#sendOrder, r)
  }

  /** Sends a stored movement as it was signed; the operation uuid stands for the transaction id. */
  override sendSigned(action: SignedTransfer): Promise<T.TxResult> {
    return M.sendMovement(this.#port, this.#sendOrder, action)
  }

  /** v3 has no private/create_subaccount: a transfer_spot out of the funding subaccount under a manager creates one. */
  override async createSubaccount(p: {
    asset_name: string
    amount: string
    margin_type?: 'SM' | 'PM' | 'PM2'
    currency?: string
  }): Promise<T.TxResult> {
    return this.sendSigned(await this.signTransfer({ method: 'create_subaccount', ...p }))
  }

  /** Funds a subaccount from the funding subaccount (v2: from the wallet). */
  override async deposit(p: { subaccount_id: number; asset_name: string; amount: string }): Promise<T.TxResult> {
    return this.sendSigned(await this.signTransfer({ method: 'deposit', ...p }))
  }

  /** Moves collateral back to the funding subaccount (v2: to the wallet). L1 payouts are `withdrawToL1`. */
  override async withdraw(p: { subaccount_id: number; asset_name: string; amount: string }): Promise<T.TxResult> {
    return this.sendSigned(await this.signTransfer({ method: 'withdraw', ...p }))
  }

  /** Moves collateral between two subaccounts of the owner: one signature, the sender's (v3's transfer_spot). */
  transferSpot(p: M.TransferSpotRequest): Promise<W.PrivateTransferSpotResponse> {
    return M.transferSpot(this.#port, p)
  }

  /** v2's two-signature transfer_erc20 becomes v3's transfer_spot; the operation's uuid stands for the transaction. */
  override async transferErc20(p: {
    subaccount_id: number
    recipient_subaccount_id: number
    asset_name: string
    amount: string
  }): Promise<T.TxResult> {
    const r = await this.transferSpot({ ...p, to_subaccount_id: p.recipient_subaccount_id })
    return { status: 'pending', transaction_id: r.op_uuid }
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

  // ---- histories (./histories.ts) --------------------------------------------------------

  /** Transfers into the subaccount from the funding subaccount (the worker's fundings), in v2's deposit shape. */
  override getDepositHistory(p: HistoryWindow): Promise<{ events: T.DepositEvent[] }> {
    return H.depositHistory(this.#port, p)
  }

  /** Transfers from the subaccount to the funding subaccount (releases, fee collections), in v2's withdrawal shape. */
  override getWithdrawalHistory(p: HistoryWindow): Promise<{ events: T.WithdrawalEvent[] }> {
    return H.withdrawalHistory(this.#port, p)
  }

  /** The in-kind fee of a movement out of the funding subaccount: its row in the sender's transfer history. */
  override movementFee(p: { transaction_id: string; start_timestamp: number }): Promise<string | null> {
    return H.movementFee(this.#port, p)
  }

  override getErc20TransferHistory(p: HistoryWindow): Promise<{ events: T.Erc20TransferEvent[] }> {
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

  override getInterestHistory(p: HistoryWindow): Promise<{ events: T.InterestEvent[] }> {
    return H.interestHistory(this.#port, p)
  }

  override getFundingHistory(
    p: HistoryWindow & { instrument_name?: string; page?: number; page_size?: number },
  ): Promise<{ events: T.FundingEvent[]; pagination: T.Pagination }> {
    return H.fundingHistory(this.#port, p)
  }

  override getOptionSettlementHistory(
    subaccount_id: number,
  ): Promise<{ subaccount_id: number; settlements: T.OptionSettlement[] }> {
    return H.optionSettlementHistory(this.#port, subaccount_id)
  }
}
