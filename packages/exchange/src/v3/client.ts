/**
 * The Derive client on the v3 protocol (docs/exchange-v3.md "What the client does on v3"): the
 * same surface as the v2 `DeriveClient` (it extends it, so the worker takes either; deps.ts picks
 * one by EXCHANGE_PROTOCOL), with v3 underneath. `wallet` is the owner's own address (L1 EOA or
 * multisig; no Derive Wallet) and signs nothing itself: the session key signs each action under
 * the v3 domain with a nanosecond nonce. Answers are translated to the v2 shapes the service reads
 * (./adapt.ts); requests are the spec's (./wire.gen.ts). What v3 moved elsewhere (L1 deposits,
 * the withdrawal batch, the histories' new shapes) is refused with V3UnsupportedError, not faked.
 */
import { type Address, type Hex, zeroAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { DEFAULT_SIGNATURE_TTL_SEC } from '../client/action-signer'
import {
  DeriveClient,
  type DeriveClientOptions,
  type OrderRequest,
  type SignedTransfer,
  tradeDataOf,
} from '../client/derive-client'
import { DeriveWsClient } from '../client/ws-client'
import { toE18 } from '../protocol/decimal'
import type * as T from '../protocol/types'
import { signV3Action } from '../protocol/v3/action'
import { V3_MATCHING_VERIFYING_CONTRACT, V3_MODULES } from '../protocol/v3/constants'
import { encodeTradeDataV3, encodeTransferSpot } from '../protocol/v3/module-data'
import { NanosecondNonceGenerator } from '../protocol/v3/nonce'
import * as A from './adapt'
import type { V3MethodName } from './codegen'
import type * as W from './wire.gen'

/** An operation v2 had that v3 does not offer over this API (it moved to L1 or changed shape). */
export class V3UnsupportedError extends Error {
  constructor(what: string, instead: string) {
    super(`${what} is not available on Derive v3: ${instead} (docs/exchange-v3.md)`)
    this.name = 'V3UnsupportedError'
  }
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

/** Page size for `public/get_all_instruments` (the spec's maximum). */
const INSTRUMENT_PAGE = 1000

/** A JSON integer literal of any size: the spec types transfer nonces as integers, and they exceed 2^53. */
function exactInteger(n: bigint): number {
  return (JSON as unknown as { rawJSON(text: string): number }).rawJSON(n.toString())
}

interface SignedV3 {
  nonce: bigint
  signer: Address
  signature: Hex
  signature_expiry_sec: number
}

export interface TransferSpotRequest {
  subaccount_id: number
  to_subaccount_id: number
  asset_name: string
  amount: string
  /** the most the exchange may charge for the move, in USD; defaults to 0 (internal moves are free) */
  max_fee_usd?: string
}

export class DeriveV3Client extends DeriveClient {
  readonly protocol = 'v3' as const
  readonly #opts: DeriveClientOptions
  readonly #nowMs: () => number
  readonly #nonces: NanosecondNonceGenerator
  readonly #signer: Address
  readonly #instruments = new Map<string, T.Instrument>()
  readonly #currencies = new Map<string, T.Currency>()

  /** `httpUrl` is the v3 base (…/v3), `wsUrl` its socket (…/v3/ws), `wallet` the owner, `chainId` the v3 domain's. */
  constructor(opts: DeriveClientOptions) {
    super({ ...opts, contracts: opts.contracts ?? V3_CONTRACTS })
    this.#opts = opts
    const clock = opts.clock
    this.#nowMs = () => (clock ? clock.now().getTime() : Date.now())
    this.#nonces = new NanosecondNonceGenerator(this.#nowMs)
    this.#signer = privateKeyToAccount(opts.sessionKey).address
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

  // ---- public reads ----------------------------------------------------------------------

  override getTime(): Promise<number> {
    return this.#wire('public/get_time', null)
  }

  /** Every page of `public/get_all_instruments` (v3 dropped `public/get_instruments`). */
  override async getInstruments(p: {
    currency: string
    instrument_type: T.InstrumentType
    expired?: boolean
  }): Promise<T.Instrument[]> {
    const out: T.Instrument[] = []
    for (let page = 1; ; page++) {
      const r = await this.#wire('public/get_all_instruments', {
        currency: p.currency,
        instrument_type: p.instrument_type,
        expired: p.expired ?? false,
        page,
        page_size: INSTRUMENT_PAGE,
      })
      out.push(...r.instruments.map(A.instrumentFromV3))
      if (page >= r.pagination.num_pages) return out
    }
  }

  override async getInstrument(instrument_name: string): Promise<T.Instrument> {
    const hit = this.#instruments.get(instrument_name)
    if (hit) return hit
    const inst = A.instrumentFromV3(await this.#wire('public/get_instrument', { instrument_name }))
    this.#instruments.set(instrument_name, inst)
    return inst
  }

  /** The slim v3 ticker with its (cached) instrument's fields, in the v2 ticker's shape. */
  override async getTicker(instrument_name: string): Promise<T.Ticker> {
    const [inst, t] = await Promise.all([
      this.getInstrument(instrument_name),
      this.#wire('public/get_ticker', { instrument_name }),
    ])
    return A.tickerFromV3(inst, t)
  }

  override async getCurrency(currency: string): Promise<T.Currency> {
    const hit = this.#currencies.get(currency)
    if (hit) return hit
    const c = A.currencyFromV3(await this.#wire('public/get_currency', { currency }))
    this.#currencies.set(currency, c)
    return c
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

  /** Signs an order under the v3 domain (nanosecond nonce, sent as the string the spec types). */
  async #signedOrder(p: OrderRequest): Promise<W.CreateOrderRequest> {
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

  /** Moves collateral between two subaccounts of the owner: one signature, the sender's (v3's transfer_spot). */
  async transferSpot(p: TransferSpotRequest): Promise<W.PrivateTransferSpotResponse> {
    const { address } = await this.#spotAsset(p.asset_name)
    const max_fee_usd = p.max_fee_usd ?? '0'
    const data = encodeTransferSpot({
      toSubaccountId: BigInt(p.to_subaccount_id),
      newSubaccountManager: 0n,
      asset: address,
      subId: 0n,
      amountE18: toE18(p.amount),
      maxFeeUsdE18: toE18(max_fee_usd),
    })
    const s = await this.#sign(p.subaccount_id, V3_MODULES.transfer, data)
    return this.#wire('private/transfer_spot', {
      subaccount_id: p.subaccount_id,
      to_subaccount_id: p.to_subaccount_id,
      new_subaccount_manager: 0,
      asset_name: p.asset_name,
      sub_id: 0,
      amount: p.amount,
      max_fee_usd,
      nonce: exactInteger(s.nonce),
      signer: s.signer,
      signature: s.signature,
      signature_expiry_sec: s.signature_expiry_sec,
    })
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

  async #spotAsset(asset_name: string): Promise<{ address: Address }> {
    const c = await this.getCurrency(asset_name)
    if (!c.protocol_asset_addresses.spot) throw new Error(`${asset_name} has no spot asset on v3`)
    return { address: c.protocol_asset_addresses.spot as Address }
  }

  // ---- what v3 does not offer here -------------------------------------------------------

  override signTransfer(): Promise<SignedTransfer> {
    return Promise.reject(
      new V3UnsupportedError(
        'create_subaccount / deposit / withdraw',
        'deposits are L1 OnchainActionManager calls, withdrawals private/withdraw with max_fee_usd',
      ),
    )
  }

  override sendSigned(): Promise<T.TxResult> {
    return Promise.reject(new V3UnsupportedError('sendSigned', 'no signed v2 movement can be replayed on v3'))
  }

  override createSubaccount(): Promise<T.TxResult> {
    return Promise.reject(
      new V3UnsupportedError(
        'private/create_subaccount',
        'a first L1 deposit or transfer_spot with a manager creates one',
      ),
    )
  }

  override deposit(): Promise<T.TxResult> {
    return Promise.reject(new V3UnsupportedError('private/deposit', 'deposits are L1 OnchainActionManager calls'))
  }

  override withdraw(): Promise<T.TxResult> {
    return Promise.reject(new V3UnsupportedError('v2 private/withdraw', 'v3 withdraw pays out on L1 with max_fee_usd'))
  }

  override orderDebug(): Promise<T.OrderDebugResult> {
    return Promise.reject(new V3UnsupportedError('private/order_debug', 'not wired in this client yet'))
  }

  override getTransaction(): Promise<{ status: string; data: unknown }> {
    return Promise.reject(new V3UnsupportedError('public/get_transaction', 'v3 reports batch_status per operation'))
  }

  override getDepositHistory(): Promise<{ events: T.DepositEvent[] }> {
    return Promise.reject(new V3UnsupportedError('the v2 deposit history', 'v3 reports deposits with batch_status'))
  }

  override getWithdrawalHistory(): Promise<{ events: T.WithdrawalEvent[] }> {
    return Promise.reject(
      new V3UnsupportedError('the v2 withdrawal history', 'v3 reports withdrawals with batch_status'),
    )
  }

  override getErc20TransferHistory(): Promise<{ events: T.Erc20TransferEvent[] }> {
    return Promise.reject(new V3UnsupportedError('the v2 transfer history', 'not wired in this client yet'))
  }

  override getInterestHistory(): Promise<{ events: T.InterestEvent[] }> {
    return Promise.reject(new V3UnsupportedError('private/get_interest_history', 'not wired in this client yet'))
  }

  override getFundingHistory(): Promise<{ events: T.FundingEvent[]; pagination: T.Pagination }> {
    return Promise.reject(new V3UnsupportedError('private/get_funding_history', 'not wired in this client yet'))
  }

  override getOptionSettlementHistory(): Promise<{ subaccount_id: number; settlements: T.OptionSettlement[] }> {
    return Promise.reject(
      new V3UnsupportedError('private/get_option_settlement_history', 'not wired in this client yet'),
    )
  }
}
