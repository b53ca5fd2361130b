/**
 * @wh/treasury: the platform's money between its hot wallets and the exchange (docs/chains.md "Bridge", "Treasury",
 * "The L2 route", "Rebalancing"). bridge/: each hot wallet's surplus to the exchange (Ethereum's by Derive v3's L1
 * deposit, an L2's to L1 over CCTP); treasury/: the Ethereum hot wallet refilled from the funding subaccount;
 * cctp/: the L2 route's transfers over Circle's CCTP (sweeps and refills). The chain-level pieces (adapters,
 * CCTP's contracts and attestation) are @wh/wallet's; the worker's ticks call the runs here.
 */

export * from './bridge/bridge'
export * from './cctp/backoff'
export * from './cctp/plan'
export * from './cctp/refill'
export * from './cctp/route'
export { type CctpReason, type CctpRow, type CctpState, openTransfer, openTransfers, transferById } from './cctp/store'
export * from './cctp/transfer'
export * from './deps'
export * from './hot-wallet-eth'
export * from './locks'
export * from './treasury/payout'
export { openWithdrawal, openWithdrawalTotals, type TreasuryRow, type TreasuryState } from './treasury/store'
export * from './treasury/treasury'
