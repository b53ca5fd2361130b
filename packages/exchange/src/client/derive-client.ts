/**
 * The typed Derive client: public reads, authenticated private reads, and signed actions
 * (deposit, withdrawal, transfer between subaccounts, orders) for one smart-contract wallet
 * acting through its session key.
 */
import type { Clock } from '@wh/core'
import { systemClock } from '@wh/core'
import type { Address, Hex } from 'viem'
import { AUTH_HEADERS, type AuthProof, signAuthProof } from '../protocol/auth-message'
import { contractsForChain, type DeriveContracts } from '../protocol/constants'
import { toE18, toUnits } from '../protocol/decimal'
import {
  EMPTY_MODULE_DATA,
  encodeDepositData,
  encodeTradeData,
  encodeTransferData,
  encodeWithdrawalData,
  type TradeData,
} from '../protocol/module-data'
import type {
  Currency,
  DepositEvent,
  Erc20TransferEvent,
  FundingEvent,
  Instrument,
  InstrumentType,
  InterestEvent,
  OptionSettlement,
  Order,
  OrderDebugResult,
  Pagination,
  Subaccount,
  Ticker,
  Trade,
  TxResult,
  WithdrawalEvent,
} from '../protocol/types'
import { ActionSigner, type SignedFields } from './action-signer'
import { HttpTransport } from './http-transport'
import type { ExchangeLogger } from './logger'
import type { RetryPolicy, Sleep } from './retry'
import { DeriveWsClient } from './ws-client'

export interface DeriveClientOptions {
  /** EXCHANGE_HTTP_URL */
  httpUrl: string
  /** EXCHANGE_WS_URL */
  wsUrl?: string
  /** EXCHANGE_WALLET_ADDRESS: the smart-contract wallet on the Derive chain. */
  wallet: Address
  /** SESSION_PRIVATE_KEY */
  sessionKey: Hex
  /** EXCHANGE_CHAIN_ID */
  chainId: number
  /** Defaults to the published contracts of the chain. */
  contracts?: DeriveContracts
  clock?: Clock
  logger?: ExchangeLogger
  retry?: RetryPolicy
  timeoutMs?: number
  signatureTtlSec?: number
  fetch?: typeof fetch
  sleep?: Sleep
}

export interface OrderRequest {
  subaccount_id: number
  instrument_name: string
  direction: 'buy' | 'sell'
  amount: string
  limit_price: string
  /** Max fee per unit of amount, in USD. */
  max_fee: string
  time_in_force?: 'gtc' | 'post_only' | 'fok' | 'ioc'
  order_type?: 'limit' | 'market'
  label?: string
  reduce_only?: boolean
  mmp?: boolean
  signature_expiry_sec?: number
}

/** What an order signs, from the request and its instrument (v2 and v3 encode the same fields). */
export function tradeDataOf(
  inst: Pick<Instrument, 'base_asset_address' | 'base_asset_sub_id'>,
  p: Pick<OrderRequest, 'limit_price' | 'amount' | 'max_fee' | 'subaccount_id' | 'direction'>,
): TradeData {
  return {
    asset: inst.base_asset_address as Address,
    subId: BigInt(inst.base_asset_sub_id),
    limitPriceE18: toE18(p.limit_price),
    amountE18: toE18(p.amount),
    maxFeeE18: toE18(p.max_fee),
    recipientId: BigInt(p.subaccount_id),
    isBid: p.direction === 'buy',
  }
}

/** A collateral movement to sign (see `DeriveClient.signTransfer`). */
export type TransferRequest = (
  | { method: 'create_subaccount'; margin_type?: 'SM' | 'PM' | 'PM2'; currency?: string }
  | { method: 'deposit'; subaccount_id: number }
  | { method: 'withdraw'; subaccount_id: number }
) & {
  asset_name: string
  /** decimal string in the asset (at most its ERC20 decimals) */
  amount: string
  /** defaults to now + the client's signature TTL; the exchange wants more than five minutes ahead */
  signature_expiry_sec?: number
}

/**
 * The method and signed params of a movement, as sent: plain JSON, safe to store (never to log).
 * `method` names the movement (v2's method; v3 sends every one as transfer_spot), and v3's
 * nanosecond nonce is a decimal string, which JSON and Postgres keep exact.
 */
export interface SignedTransfer {
  method: 'create_subaccount' | 'deposit' | 'withdraw'
  params: Record<string, unknown> & Omit<SignedFields, 'nonce'> & { nonce: number | string }
}

/** One ticker notification of `subscribeTicker`: the exchange's time and the ticker in the v2 shape. */
export interface TickerUpdate {
  timestamp: number
  ticker: Ticker
}

export interface HistoryWindow {
  subaccount_id: number
  start_timestamp?: number
  end_timestamp?: number
}

export class DeriveClient {
  readonly wallet: Address
  readonly signer: ActionSigner
  readonly #http: HttpTransport
  readonly #opts: DeriveClientOptions
  readonly #clock: Clock
  readonly #instruments = new Map<string, Instrument>()
  readonly #currencies = new Map<string, Currency>()

  constructor(opts: DeriveClientOptions) {
    this.#opts = opts
    this.wallet = opts.wallet
    this.#clock = opts.clock ?? systemClock
    const contracts = opts.contracts ?? contractsForChain(opts.chainId)
    this.signer = new ActionSigner(
      opts.wallet,
      opts.sessionKey,
      opts.chainId,
      contracts,
      () => this.#clock.now().getTime(),
      opts.signatureTtlSec,
    )
    this.#http = new HttpTransport({
      baseUrl: opts.httpUrl,
      ...(opts.timeoutMs !== undefined && { timeoutMs: opts.timeoutMs }),
      ...(opts.retry && { retry: opts.retry }),
      ...(opts.logger && { logger: opts.logger }),
      ...(opts.fetch && { fetch: opts.fetch }),
      ...(opts.sleep && { sleep: opts.sleep }),
    })
  }

  // ---- transport -------------------------------------------------------------------------

  /** Calls any public method. Reads are retried on transport failures. */
  publicCall<T>(method: string, params: object = {}): Promise<T> {
    return this.#http.call<T>(`public/${method}`, params, { idempotent: isRead(method) })
  }

  /** Calls any private method with fresh auth headers; only reads (`get_*`) are retried. */
  privateCall<T>(method: string, params: object = {}): Promise<T> {
    return this.#http.call<T>(`private/${method}`, params, {
      idempotent: isRead(method),
      headers: () => this.authHeaders(),
    })
  }

  /** The three auth headers for one request, signed now. */
  async authHeaders(): Promise<Record<string, string>> {
    const p = await this.authProof()
    return {
      [AUTH_HEADERS.wallet]: p.wallet,
      [AUTH_HEADERS.timestamp]: p.timestamp,
      [AUTH_HEADERS.signature]: p.signature,
    }
  }

  authProof(): Promise<AuthProof> {
    return signAuthProof(this.wallet, this.#opts.sessionKey, this.#clock.now().getTime())
  }

  /** Opens a WebSocket and logs it in; the caller closes it. */
  async connectWs(opts: { login?: boolean } = {}): Promise<DeriveWsClient> {
    if (!this.#opts.wsUrl) throw new Error('wsUrl not configured')
    const ws = await DeriveWsClient.connect(this.#opts.wsUrl, {
      ...(this.#opts.logger && { logger: this.#opts.logger }),
    })
    if (opts.login !== false) await ws.login(await this.authProof())
    return ws
  }

  /**
   * Follows one instrument's ticker on a socket from `connectWs` (channel `ticker.{name}.{ms}`),
   * each notification handed over in the v2 ticker shape; resolves the unsubscribe. The v3 client
   * subscribes v3's `ticker_slim` channel instead, so a feed holding either client is the same code.
   */
  subscribeTicker(
    ws: DeriveWsClient,
    instrument_name: string,
    intervalMs: 100 | 1000,
    onTicker: (u: TickerUpdate) => void,
  ): Promise<() => Promise<void>> {
    return ws.subscribe([`ticker.${instrument_name}.${intervalMs}`], (_channel, data) => {
      const d = data as { timestamp?: unknown; instrument_ticker?: Ticker } | null
      const t = d?.instrument_ticker
      if (t) onTicker({ timestamp: typeof d.timestamp === 'number' ? d.timestamp : t.timestamp, ticker: t })
    })
  }

  // ---- public reads ----------------------------------------------------------------------

  getTime(): Promise<number> {
    return this.publicCall<number>('get_time')
  }

  getInstruments(p: { currency: string; instrument_type: InstrumentType; expired?: boolean }): Promise<Instrument[]> {
    return this.publicCall('get_instruments', { expired: false, ...p })
  }

  /** One instrument; cached, since what is signed (asset address, sub id) never changes. */
  async getInstrument(instrument_name: string): Promise<Instrument> {
    const hit = this.#instruments.get(instrument_name)
    if (hit) return hit
    const inst = await this.publicCall<Instrument>('get_instrument', { instrument_name })
    this.#instruments.set(instrument_name, inst)
    return inst
  }

  getTicker(instrument_name: string): Promise<Ticker> {
    return this.publicCall('get_ticker', { instrument_name })
  }

  /**
   * The smallest step of an amount the exchange holds, in base units of a token with `decimals`:
   * v2 takes any amount the token can express (1).
   */
  amountStepUnits(_decimals: number): bigint {
    return 1n
  }

  /** A currency with its protocol asset addresses and ERC20 decimals; cached. */
  async getCurrency(currency: string): Promise<Currency> {
    const hit = this.#currencies.get(currency)
    if (hit) return hit
    const c = await this.publicCall<Currency>('get_currency', { currency })
    this.#currencies.set(currency, c)
    return c
  }

  getTransaction(transaction_id: string): Promise<{ status: string; data: unknown }> {
    return this.publicCall('get_transaction', { transaction_id })
  }

  // ---- private reads ---------------------------------------------------------------------

  getSubaccounts(): Promise<{ wallet: string; subaccount_ids: number[] }> {
    return this.privateCall('get_subaccounts', { wallet: this.wallet })
  }

  getSubaccount(subaccount_id: number): Promise<Subaccount> {
    return this.privateCall('get_subaccount', { subaccount_id })
  }

  /**
   * Every subaccount of the wallet in one call, each shaped as `getSubaccount`'s answer. The
   * exchange answers an entry it could not build with `failed_to_fetch: true` instead of failing
   * the whole call: callers must treat such an entry as not read.
   */
  getAllPortfolios(): Promise<Array<Subaccount & { failed_to_fetch?: boolean }>> {
    return this.privateCall('get_all_portfolios', { wallet: this.wallet })
  }

  getOpenOrders(subaccount_id: number): Promise<{ subaccount_id: number; orders: Order[] }> {
    return this.privateCall('get_open_orders', { subaccount_id })
  }

  getOrder(subaccount_id: number, order_id: string): Promise<Order> {
    return this.privateCall('get_order', { subaccount_id, order_id })
  }

  getTradeHistory(p: {
    subaccount_id: number
    from_timestamp?: number
    to_timestamp?: number
    page?: number
    page_size?: number
  }): Promise<{ subaccount_id: number; trades: Trade[]; pagination: Pagination }> {
    return this.privateCall('get_trade_history', p)
  }

  getDepositHistory(p: HistoryWindow): Promise<{ events: DepositEvent[] }> {
    return this.privateCall('get_deposit_history', p)
  }

  getWithdrawalHistory(p: HistoryWindow): Promise<{ events: WithdrawalEvent[] }> {
    return this.privateCall('get_withdrawal_history', p)
  }

  getErc20TransferHistory(p: HistoryWindow): Promise<{ events: Erc20TransferEvent[] }> {
    return this.privateCall('get_erc20_transfer_history', p)
  }

  /**
   * What the exchange took in kind from a movement the worker sent (its transaction id), as a
   * decimal in the moved asset; null when the protocol charges none. v2 takes no fee on the
   * worker's movements; v3 charges for creating a subaccount (docs/exchange-v3.md "Movements on v3").
   */
  async movementFee(_p: { transaction_id: string; start_timestamp: number }): Promise<string | null> {
    return null
  }

  getInterestHistory(p: HistoryWindow): Promise<{ events: InterestEvent[] }> {
    return this.privateCall('get_interest_history', p)
  }

  /** One page of the perp funding history (`page` from 1, `page_size` up to 1000). */
  getFundingHistory(
    p: HistoryWindow & { instrument_name?: string; page?: number; page_size?: number },
  ): Promise<{ events: FundingEvent[]; pagination: Pagination }> {
    return this.privateCall('get_funding_history', p)
  }

  getOptionSettlementHistory(
    subaccount_id: number,
  ): Promise<{ subaccount_id: number; settlements: OptionSettlement[] }> {
    return this.privateCall('get_option_settlement_history', { subaccount_id })
  }

  // ---- signed actions --------------------------------------------------------------------

  /** Creates a subaccount funded from the wallet with a first deposit (subaccount id 0 in the action). */
  async createSubaccount(p: {
    asset_name: string
    amount: string
    margin_type?: 'SM' | 'PM' | 'PM2'
    currency?: string
  }): Promise<TxResult> {
    return this.sendSigned(await this.signTransfer({ method: 'create_subaccount', ...p }))
  }

  /** Moves `amount` of an asset from the wallet into a subaccount. */
  async deposit(p: { subaccount_id: number; asset_name: string; amount: string }): Promise<TxResult> {
    return this.sendSigned(await this.signTransfer({ method: 'deposit', ...p }))
  }

  /** Moves `amount` of an asset from a subaccount back to the wallet. */
  async withdraw(p: { subaccount_id: number; asset_name: string; amount: string }): Promise<TxResult> {
    return this.sendSigned(await this.signTransfer({ method: 'withdraw', ...p }))
  }

  /**
   * Builds and signs the params of a collateral movement (create_subaccount, deposit, withdraw)
   * WITHOUT sending them, so a caller can store the signed action (nonce, expiry, signature)
   * before it leaves: a restarted process then re-sends that same action (`sendSigned`), which
   * the exchange accepts once at most (the nonce is single-use), never a second, different one.
   * The result is plain JSON; it holds a signature and must never be logged or shown.
   *
   * @example
   *   const action = await client.signTransfer({ method: 'deposit', subaccount_id: 7, asset_name: 'USDC', amount: '250' })
   *   await store(action) // commit first
   *   const tx = await client.sendSigned(action)
   */
  async signTransfer(r: TransferRequest): Promise<SignedTransfer> {
    const { asset, decimals } = await this.#asset(r.asset_name)
    const contracts = this.signer.contracts
    const units = toUnits(r.amount, decimals)
    if (r.method === 'withdraw') {
      const data = encodeWithdrawalData(asset, units)
      const signed = await this.signer.sign(r.subaccount_id, contracts.withdrawalModule, data, r.signature_expiry_sec)
      const params = { subaccount_id: r.subaccount_id, asset_name: r.asset_name, amount: r.amount, ...signed }
      return { method: 'withdraw', params }
    }
    const data = encodeDepositData(units, asset, contracts.standardManager)
    if (r.method === 'deposit') {
      const signed = await this.signer.sign(r.subaccount_id, contracts.depositModule, data, r.signature_expiry_sec)
      const params = { subaccount_id: r.subaccount_id, asset_name: r.asset_name, amount: r.amount, ...signed }
      return { method: 'deposit', params }
    }
    const signed = await this.signer.sign(0, contracts.depositModule, data, r.signature_expiry_sec)
    const params = {
      wallet: this.wallet,
      asset_name: r.asset_name,
      amount: r.amount,
      margin_type: r.margin_type ?? 'SM',
      ...(r.currency && { currency: r.currency }),
      ...signed,
    }
    return { method: 'create_subaccount', params }
  }

  /**
   * Sends a signed movement exactly as it was built (and stored). Never retried here: it may have
   * landed; a caller that lost the answer re-sends the same params and reads the histories.
   */
  sendSigned(action: SignedTransfer): Promise<TxResult> {
    return this.privateCall<TxResult>(action.method, action.params)
  }

  /** Transfers collateral between two subaccounts of the wallet; both sides sign. */
  async transferErc20(p: {
    subaccount_id: number
    recipient_subaccount_id: number
    asset_name: string
    amount: string
  }): Promise<TxResult> {
    const { asset } = await this.#asset(p.asset_name)
    const contracts = this.signer.contracts
    const line = { asset, subId: 0n, amountE18: toE18(p.amount) }
    const senderData = encodeTransferData(BigInt(p.recipient_subaccount_id), contracts.standardManager, [line])
    const sender_details = await this.signer.sign(p.subaccount_id, contracts.transferModule, senderData)
    const recipient_details = await this.signer.sign(
      p.recipient_subaccount_id,
      contracts.transferModule,
      EMPTY_MODULE_DATA,
    )
    return this.privateCall('transfer_erc20', {
      subaccount_id: p.subaccount_id,
      recipient_subaccount_id: p.recipient_subaccount_id,
      sender_details,
      recipient_details,
      transfer: { address: asset, amount: p.amount, sub_id: 0 },
    })
  }

  /** Places a signed limit order; resolves with the order and any immediate fills. */
  async order(p: OrderRequest): Promise<{ order: Order; trades: Trade[] }> {
    return this.privateCall('order', await this.#signedOrder(p))
  }

  /** What the exchange computes for an order's signature: encoded data, action hash, typed-data hash. */
  async orderDebug(p: OrderRequest): Promise<OrderDebugResult> {
    return this.privateCall('order_debug', await this.#signedOrder(p))
  }

  /** The signed params of an order, exposed so a test can tamper with them. */
  async signedOrderParams(p: OrderRequest): Promise<Record<string, unknown>> {
    return this.#signedOrder(p)
  }

  cancel(p: { subaccount_id: number; instrument_name: string; order_id: string }): Promise<Order> {
    return this.privateCall('cancel', p)
  }

  cancelAll(subaccount_id: number): Promise<string> {
    return this.privateCall('cancel_all', { subaccount_id })
  }

  async #signedOrder(p: OrderRequest): Promise<Record<string, unknown>> {
    const inst = await this.getInstrument(p.instrument_name)
    const data = encodeTradeData(tradeDataOf(inst, p))
    const { signature_expiry_sec, ...order } = p
    const signed = await this.signer.sign(
      p.subaccount_id,
      this.signer.contracts.tradeModule,
      data,
      signature_expiry_sec,
    )
    return { order_type: 'limit', time_in_force: 'gtc', ...order, ...signed }
  }

  async #asset(asset_name: string): Promise<{ asset: Address; decimals: number }> {
    const c = await this.getCurrency(asset_name)
    const asset = c.protocol_asset_addresses.spot
    if (!asset || !c.erc20_details) throw new Error(`${asset_name} is not an ERC20 collateral`)
    return { asset: asset as Address, decimals: c.erc20_details.decimals }
  }
}

/** Reads are safe to repeat; everything else might have landed on the first try. */
function isRead(method: string): boolean {
  return method.startsWith('get_') || method === 'order_debug'
}
