/** Public methods: time, instruments, tickers, currencies, transactions. */
import { fromE18 } from '../protocol/decimal'
import type { Currency } from '../protocol/types'
import { COLLATERALS, isCollateralName, OPTION_ASSETS, PERP_ASSETS } from './assets'
import type { Handler } from './handler'
import { rpcErr } from './rpc-error'
import { instrumentView, tickerView } from './views'

export const publicMethods: Record<string, Handler> = {
  'public/get_time': ({ engine }) => engine.now(),

  'public/get_instruments': ({ engine }, p) => {
    const now = engine.now()
    return [...engine.catalog.byName.values()]
      .filter((i) => (p.currency === undefined || i.currency === p.currency) && i.type === p.instrument_type)
      .filter((i) => (p.expired === true) === (i.option !== null && i.option.expirySec * 1000 <= now))
      .map((i) => instrumentView(engine, i))
  },

  'public/get_instrument': ({ engine }, p) => {
    const i = engine.catalog.get(String(p.instrument_name))
    if (!i) throw rpcErr.instrument(String(p.instrument_name))
    return instrumentView(engine, i)
  },

  'public/get_ticker': ({ engine }, p) => {
    const i = engine.catalog.get(String(p.instrument_name))
    if (!i) throw rpcErr.instrument(String(p.instrument_name))
    return tickerView(engine, i)
  },

  'public/get_currency': ({ engine }, p): Currency => {
    const name = String(p.currency)
    if (!isCollateralName(name)) throw rpcErr.asset(name)
    const c = COLLATERALS[name]
    const u = name === 'USDC' ? null : name
    return {
      currency: name,
      spot_price: u ? fromE18(engine.market.indexE18(u)) : '1',
      instrument_types: u ? ['erc20', 'option', 'perp'] : ['erc20'],
      protocol_asset_addresses: {
        spot: c.address,
        perp: u ? PERP_ASSETS[u] : null,
        option: u ? OPTION_ASSETS[u] : null,
        underlying_erc20: c.underlyingErc20,
      },
      erc20_details: { decimals: c.decimals, underlying_erc20_address: c.underlyingErc20 },
      managers: [{ address: engine.contracts.standardManager, margin_type: 'SM', currency: null }],
      supply_apy: fromE18(engine.supplyApyE18),
      borrow_apy: fromE18(engine.borrowApyE18),
    }
  },

  'public/get_transaction': ({ engine }, p) => {
    const tx = engine.transactions.get(String(p.transaction_id))
    if (!tx) throw rpcErr.params('unknown transaction_id')
    return { status: tx.status, data: tx.data, error_log: null, transaction_hash: null }
  },
}
