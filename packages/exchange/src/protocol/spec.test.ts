import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

/** The published v3 specs kept as test data (test/spec/v3/SOURCE.md): what our v3 work relies on must be in them. */
function load(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`../../test/spec/v3/${name}`, import.meta.url), 'utf8'))
}

const openapi = load('openapi.json') as {
  info: { version: string }
  paths: Record<string, { post: { requestBody?: { content: { 'application/json': { schema: { $ref: string } } } } } }>
  components: {
    schemas: Record<string, { properties?: Record<string, { description?: string }>; required?: string[] }>
  }
}
const subscriptions = load('subscriptions.asyncapi.json') as { channels: Record<string, { description?: string }> }
const websocket = load('websocket.asyncapi.json') as {
  components: { schemas: { LoginRequest: { properties: Record<string, unknown> } } }
}

function paramsOf(method: string) {
  const ref = openapi.paths[`/${method}`]?.post.requestBody?.content['application/json'].schema.$ref
  if (!ref) throw new Error(`${method} has no request schema`)
  const schema = openapi.components.schemas[ref.split('/').pop()!]!
  return { names: Object.keys(schema.properties ?? {}), required: schema.required ?? [] }
}

describe('Derive v3 published spec 0.2.0', () => {
  it('is the version docs/exchange-v3.md was written from', () => {
    expect(openapi.info.version).toBe('0.2.0')
  })

  it('has every method the v3 client plan uses', () => {
    const needed = [
      'private/get_subaccounts',
      'private/get_subaccount',
      'private/get_all_portfolios',
      'private/get_positions',
      'private/get_collaterals',
      'private/transfer_spot',
      'private/transfer_spot_external',
      'private/withdraw',
      'public/withdraw_debug',
      'private/order',
      'private/order_debug',
      'private/cancel',
      'private/cancel_all',
      'private/get_order',
      'private/get_open_orders',
      'private/get_trade_history',
      'private/get_deposit_history',
      'private/get_withdrawal_history',
      'private/get_erc20_transfer_history',
      'private/set_session_key',
      'private/session_keys',
      'public/register_deposit_address',
      'public/get_pending_deposits',
      'public/get_risk_universes',
      'public/get_instrument',
      'public/get_all_instruments',
      'public/get_ticker',
      'public/get_tickers',
      'public/get_currency',
      'public/get_time',
    ]
    expect(needed.filter((m) => !openapi.paths[`/${m}`])).toEqual([])
  })

  it('drops the v2 methods our client calls today', () => {
    for (const m of [
      'private/create_subaccount',
      'private/transfer_erc20',
      'private/deposit',
      'public/get_instruments',
    ]) {
      expect(openapi.paths[`/${m}`]).toBeUndefined()
    }
  })

  it('withdraw carries max_fee_usd, recipient and force_batch; transfer_spot carries max_fee_usd and new_subaccount_manager', () => {
    const w = paramsOf('private/withdraw')
    expect(w.required).toEqual(expect.arrayContaining(['max_fee_usd', 'force_batch', 'amount_in_underlying']))
    expect(w.names).toContain('recipient')
    expect(w.required).not.toContain('recipient')
    const t = paramsOf('private/transfer_spot')
    expect(t.required).toEqual(expect.arrayContaining(['max_fee_usd', 'new_subaccount_manager', 'to_subaccount_id']))
    expect(paramsOf('private/transfer_spot_external').required).toContain('recipient_address')
    expect(paramsOf('public/register_deposit_address').required).toEqual(
      expect.arrayContaining(['wallet', 'deposit_type']),
    )
  })

  it('defines the Action nonce as UTC nanoseconds', () => {
    const nonce = openapi.components.schemas['Action']?.properties?.['nonce']?.description ?? ''
    expect(nonce).toMatch(/nanosecond/i)
  })

  it('logs in over WebSocket with wallet, timestamp and signature, and has the channels we subscribe to', () => {
    expect(Object.keys(websocket.components.schemas.LoginRequest.properties).sort()).toEqual([
      'signature',
      'timestamp',
      'wallet',
    ])
    const names = Object.values(subscriptions.channels).map((c) => c.description?.match(/`([^`]+)`/)?.[1])
    expect(names).toEqual(
      expect.arrayContaining([
        'ticker_slim.{instrument_name}.{interval}',
        'orderbook.{instrument_name}.{group}.{depth}',
        'trades.{instrument_name}',
        '{subaccount_id}.orders',
        '{subaccount_id}.trades',
        '{subaccount_id}.balances',
      ]),
    )
    expect(names.some((n) => n?.startsWith('ticker.'))).toBe(false)
  })
})
