export * from './alerts'
export * from './balances'
export * from './bridge/index'
export * from './cctp/index'
export * from './chain-cursors'
export * from './chain-identity'
export * from './chains'
export * from './clients'
export * from './contracts/deploy'
export * from './contracts/local-cctp'
export * from './contracts/local-chains'
export { testErc1271WalletAbi, testErc1271WalletBytecode } from './contracts/test-erc1271-wallet.gen'
export {
  testErc1271WalletFactoryAbi,
  testErc1271WalletFactoryBytecode,
} from './contracts/test-erc1271-wallet-factory.gen'
export { testErc1967ProxyAbi, testErc1967ProxyBytecode } from './contracts/test-erc1967-proxy.gen'
export { testErc4337AccountAbi, testErc4337AccountBytecode } from './contracts/test-erc4337-account.gen'
export { testHostileTokenAbi, testHostileTokenBytecode } from './contracts/test-hostile-token.gen'
export {
  testMessageTransmitterV2Abi,
  testMessageTransmitterV2Bytecode,
} from './contracts/test-message-transmitter-v2.gen'
export {
  testOnchainActionManagerAbi,
  testOnchainActionManagerBytecode,
} from './contracts/test-onchain-action-manager.gen'
export { testSafeProxyAbi, testSafeProxyBytecode } from './contracts/test-safe-proxy.gen'
export { testSafeSingletonAbi, testSafeSingletonBytecode } from './contracts/test-safe-singleton.gen'
export { testSmartWalletAbi, testSmartWalletBytecode } from './contracts/test-smart-wallet.gen'
export { testTokenMessengerV2Abi, testTokenMessengerV2Bytecode } from './contracts/test-token-messenger-v2.gen'
export { testUsdcAbi, testUsdcBytecode } from './contracts/test-usdc.gen'
export { testWithdrawalOutboxAbi } from './contracts/test-withdrawal-outbox.gen'
export * from './deposit-addresses'
export * from './expected-balance'
export * from './hd'
export * from './hot-wallet'
export * from './network-fees'
export * from './outbound-policy'
export * from './outbox'
export * from './outbox-deps'
// an operator's verdict on a held transaction, on the chain's evidence (docs/hostile-world.md "Never pay twice")
export {
  type HeldEvidence,
  type HeldVerdict,
  OutboundMayStillMineError,
  OutboundMinedError,
  OutboundNonceTakerUnknownError,
  OutboundReceiptNotFinalError,
  readHeldEvidence,
  resolveHeldOutbound,
} from './outbox-held'
export * from './platform-wallets'
export * from './scan'
export {
  type BlockRange,
  depositAddressLookup,
  isLogsLimitError,
  NATIVE_TRANSFER_LOG_INDEX,
  parseTransferLog,
  TRANSFER_TOPIC,
} from './scan-parse'
export * from './send-errors'
export * from './traces'
