/**
 * The API's request and response shapes, derived from the route schemas the API itself validates
 * and documents with (@wh/api-schemas). Types only: `import type` keeps the schemas, and the
 * domain packages their constants come from, out of a browser bundle.
 */
import type * as S from '@wh/api-schemas'
import type { Static } from 'typebox'

export type NonceResponse = Static<typeof S.auth.NonceResponse>
export type VerifyBody = Static<typeof S.auth.VerifyBody>
export type VerifyResponse = Static<typeof S.auth.VerifyResponse>

export type HealthQuery = Static<typeof S.health.HealthQuery>
export type HealthResponse = Static<typeof S.health.HealthResponse>
export type LiveResponse = Static<typeof S.health.LiveResponse>

export type AssetsResponse = Static<typeof S.market.AssetsResponse>
export type AssetItem = Static<typeof S.market.AssetItem>
export type DepositRoute = Static<typeof S.market.DepositRoute>
export type ChartQuery = Static<typeof S.market.ChartQuery>
export type ChartResponse = Static<typeof S.market.ChartResponse>
export type FeesResponse = Static<typeof S.market.FeesResponse>
export type StrategiesQuery = Static<typeof S.strategies.StrategiesQuery>
export type StrategiesResponse = Static<typeof S.strategies.StrategiesResponse>

export type DepositAddressResponse = Static<typeof S.treasury.DepositAddressResponse>
export type DepositsQuery = Static<typeof S.treasury.DepositsQuery>
export type DepositsResponse = Static<typeof S.treasury.DepositsResponse>
export type DepositItem = Static<typeof S.treasury.DepositItem>
export type PublicSolvencyResponse = Static<typeof S.solvency.PublicSolvencyResponse>
export type TradingConfigResponse = Static<typeof S.trading.TradingConfigResponse>
export type SignalStateResponse = Static<typeof S.signals.SignalStateResponse>

export type SummaryQuery = Static<typeof S.portfolio.SummaryQuery>
export type SummaryResponse = Static<typeof S.portfolio.SummaryResponse>
export type StatementQuery = Omit<Static<typeof S.portfolio.StatementQuery>, 'format'>
export type StatementResponse = Static<typeof S.portfolio.StatementResponse>

export type LiabilityRootBody = Static<typeof S.liabilities.LiabilityRoot>
export type LiabilityRootsQuery = Static<typeof S.liabilities.RootsQuery>
export type LiabilityRootsResponse = Static<typeof S.liabilities.RootsResponse>
export type LiabilityProofBody = Static<typeof S.liabilities.LiabilityProof>
export type PortfolioProofResponse = Static<typeof S.liabilities.PortfolioProofResponse>

export type CreatePositionBody = Static<typeof S.positions.CreatePositionBody>
export type CreatedPosition = Static<typeof S.positions.CreatedPosition>
export type PositionsQuery = Static<typeof S.positions.ListQuery>
export type PositionsResponse = Static<typeof S.positions.ListResponse>
export type PositionItem = Static<typeof S.positions.PositionItem>
export type CancelPositionQuery = Static<typeof S.positions.CancelQuery>
export type CancelPositionResponse = Static<typeof S.positions.CancelResponse>
export type QuoteBody = Static<typeof S.quotes.QuoteBody>
export type PositionQuote = Static<typeof S.quotes.PositionQuote>
export type FeeWarning = Static<typeof S.quotes.FeeWarning>
export type WheelCyclesQuery = Static<typeof S.quotes.CyclesQuery>
export type WheelCyclesResponse = Static<typeof S.quotes.WheelCyclesResponse>

export type WheelDecisionsQuery = Static<typeof S.decisions.DecisionsQuery>
export type WheelDecisionsResponse = Static<typeof S.decisions.DecisionsPage>
export type WheelDecision = Static<typeof S.decisions.WheelDecision>
export type WheelItem = Static<typeof S.positions.WheelItem>
export type WheelSettings = Static<typeof S.wheels.WheelSettings>
export type WheelSettingsInput = Static<typeof S.wheels.WheelSettingsInput>

export type SubaccountsResponse = Static<typeof S.subaccounts.ListResponse>
export type SubaccountAsset = Static<typeof S.subaccounts.AssetParam>
export type Release = Static<typeof S.subaccounts.Release>

export type WithdrawalRoutesResponse = Static<typeof S.withdrawals.RoutesResponse>
export type WithdrawalRoute = Static<typeof S.withdrawals.RouteSchema>
export type CreateWithdrawalBody = Static<typeof S.withdrawals.CreateWithdrawalBody>
export type CreatedWithdrawal = Static<typeof S.withdrawals.CreatedWithdrawal>
export type WithdrawalsQuery = Static<typeof S.withdrawals.ListQuery>
export type WithdrawalsResponse = Static<typeof S.withdrawals.ListResponse>
export type WithdrawalItem = Static<typeof S.withdrawals.WithdrawalItem>

export type ErrorBody = Static<typeof S.errors.ErrorBody>

// WebSocket messages (docs/market-data.md)
export type PriceUpdate = Static<typeof S.ws.PriceUpdate>
export type PriceSnapshotMessage = Static<typeof S.ws.SnapshotMessage>
export type StrategyEvent = Static<typeof S.ws.StrategyEvent>
export type StrategyState = Static<typeof S.ws.StrategyStateMessage>
/** The snapshot schema refers to its states by $ref (unknown to Static): spelled out here. */
export type StrategySnapshotMessage = { type: 'snapshot'; channel: 'strategies'; states: StrategyState[] }
export type WsClientMessage = Static<typeof S.ws.ClientMessage>
export type WsSubscribedMessage = Static<typeof S.ws.SubscribedMessage>
export type WsHeartbeatMessage = Static<typeof S.ws.HeartbeatMessage>
export type WsErrorMessage = Static<typeof S.ws.ErrorMessage>

// WS /ws/account (docs/account-stream.md)
export type AccountSnapshotMessage = Static<typeof S.accountWs.AccountSnapshotMessage>
export type AccountEventMessage = Static<typeof S.accountWs.AccountEventMessage>
export type AccountResnapshotMessage = Static<typeof S.accountWs.AccountResnapshotMessage>
export type AccountErrorMessage = Static<typeof S.accountWs.AccountErrorMessage>
export type AccountClientMessage = Static<typeof S.accountWs.AccountClientMessage>
