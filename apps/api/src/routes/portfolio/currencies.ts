/** Decimals of the ledger's currencies: one table, in @wh/core. */
export { CURRENCY_DECIMALS, decimalsOf } from '@wh/core'
