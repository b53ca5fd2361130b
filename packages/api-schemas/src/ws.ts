/**
 * Message schemas of the two WebSockets (docs/market-data.md): the price stream's live in
 * @wh/market (the feed publishes them byte for byte), the strategy stream's head in
 * @wh/market and its snapshot here (./strategies). Gathered so a client imports one place.
 */
export {
  ClientMessage,
  ErrorMessage,
  HeartbeatMessage,
  PongMessage,
  PriceInstrument,
  PriceUpdate,
  SnapshotMessage,
  StrategyEvent,
  SubscribedMessage,
} from '@wh/market'
export { StrategySnapshotMessage, StrategyStateMessage } from './strategies'
