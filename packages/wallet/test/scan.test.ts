/**
 * The deposit scanner against a real anvil node with a real TestUSDC: only transfers into our
 * deposit addresses come back, with their amounts and hd indexes; failures, dust, other tokens and
 * other recipients do not.
 */
import { type RunningChain, startChain, TEST_MNEMONIC, TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  type Address,
  createTestClient,
  createWalletClient,
  type Hex,
  http,
  parseEther,
  parseUnits,
  zeroAddress,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  buildChainRegistry,
  type ChainClients,
  type ChainInfo,
  createChainClients,
  type Deposit,
  DepositKeyring,
  deployTestUsdc,
  depositAddressLookup,
  LogsLimitError,
  NATIVE_TRANSFER_LOG_INDEX,
  ScanRangeError,
  scanDeposits,
  testUsdcAbi,
} from '../src/index'

// A chain id of our choosing, not anvil's default, to prove it flows through.
const CHAIN_ID = 84_532
const CONFIRMATIONS = 2

const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
const sender = privateKeyToAccount(TEST_PRIVATE_KEYS[1])
const poor = privateKeyToAccount(TEST_PRIVATE_KEYS[2]) // holds ETH but no USDC
const gasWallet = privateKeyToAccount(TEST_PRIVATE_KEYS[3])

// Indexes 0-9 are anvil's own funded accounts; deposit addresses start well above them.
const keyring = DepositKeyring.fromMnemonic(TEST_MNEMONIC)
const OURS = [1000, 1001, 1002, 1003, 77_777] as const
const dep = OURS.map((i) => keyring.address(i)) as [Address, Address, Address, Address, Address]
const outsider = keyring.address(5000) // derivable, but not a user's: not in the lookup
const stranger: Address = '0x000000000000000000000000000000000000dEaD'
const isDepositAddress = depositAddressLookup(OURS.map((i) => [keyring.address(i), i] as const))
const ignoreFrom = (a: Hex) => a === gasWallet.address.toLowerCase()

/** spec 6.1, as the ledger will build it */
const key = (d: Deposit) => `tx:${d.chain}:${d.txHash}:${d.logIndex}`

let chain: RunningChain
let clients: ChainClients
let info: ChainInfo
let usdc: Address
let fakeToken: Address
let test: ReturnType<typeof createTestClient>
let fromBlock: bigint
let toBlock: bigint
const sent: Record<string, Hex> = {}

async function mined(hash: Hex, expected: 'success' | 'reverted' = 'success'): Promise<Hex> {
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  expect(receipt.status).toBe(expected)
  return hash
}

const usdcTransfer = (from: typeof sender, token: Address, to: Address, amount: bigint, gas?: bigint) =>
  clients.walletClient.writeContract({
    account: from,
    address: token,
    abi: testUsdcAbi,
    functionName: 'transfer',
    args: [to, amount],
    ...(gas ? { gas } : {}),
  })
const ethTransfer = (from: typeof sender, to: Address, value: bigint, gas?: bigint) =>
  clients.walletClient.sendTransaction({ account: from, to, value, ...(gas ? { gas } : {}) })

beforeAll(async () => {
  chain = await startChain({ chainId: CHAIN_ID })
  const rpcUrls = { ethereum: chain.rpcUrl, optimism: chain.rpcUrl, base: chain.rpcUrl, arbitrum: chain.rpcUrl }
  const bootstrap = createChainClients(
    buildChainRegistry({ rpcUrls }, { base: { chainId: CHAIN_ID } }).get('base') as ChainInfo,
  )
  const deployerWallet = createWalletClient({
    account: deployer,
    chain: bootstrap.chain,
    transport: http(chain.rpcUrl),
  })
  usdc = await deployTestUsdc(deployerWallet, bootstrap.publicClient)
  fakeToken = await deployTestUsdc(deployerWallet, bootstrap.publicClient)
  info = buildChainRegistry({ rpcUrls }, { base: { chainId: CHAIN_ID, confirmations: CONFIRMATIONS, usdc } }).get(
    'base',
  ) as ChainInfo
  clients = createChainClients(info)
  test = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })

  const mint = (token: Address, to: Address, amount: bigint) =>
    clients.walletClient.writeContract({
      account: deployer,
      address: token,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [to, amount],
    })
  await mined(await mint(usdc, sender.address, parseUnits('1000000', 6)))
  await mined(await mint(fakeToken, sender.address, parseUnits('1000000', 6)))
  fromBlock = (await clients.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n

  sent.usdcToDep0 = await mined(await usdcTransfer(sender, usdc, dep[0], 25_500_000n))
  sent.usdcToOutsider = await mined(await usdcTransfer(sender, usdc, outsider, 10_000_000n))
  sent.ethToDep1 = await mined(await ethTransfer(sender, dep[1], parseEther('0.5')))
  sent.ethToStranger = await mined(await ethTransfer(sender, stranger, parseEther('1')))
  sent.mintToDep2 = await mined(await mint(usdc, dep[2], 7_000_000n))
  sent.usdcDust = await mined(await usdcTransfer(sender, usdc, dep[0], 500_000n))
  sent.ethDust = await mined(await ethTransfer(sender, dep[0], 1_000n))
  sent.fakeTokenToDep0 = await mined(await usdcTransfer(sender, fakeToken, dep[0], 99_000_000n))
  // a transfer the sender cannot cover: mined, reverted, no Transfer log
  sent.revertedUsdc = await mined(await usdcTransfer(poor, usdc, dep[0], 100_000_000n, 100_000n), 'reverted')
  // an ETH payment into a deposit address that reverts: give the address code (as EIP-7702 can)
  await test.setCode({ address: dep[3], bytecode: '0x60006000fd' }) // PUSH1 0 PUSH1 0 REVERT
  sent.revertedEth = await mined(await ethTransfer(sender, dep[3], parseEther('2'), 100_000n), 'reverted')
  await test.setCode({ address: dep[3], bytecode: '0x' })
  // the platform's own gas top-up of a deposit address is not a user's deposit
  sent.gasTopUp = await mined(await ethTransfer(gasWallet, dep[1], parseEther('0.01')))

  // several deposits in one block: ERC-20 and native side by side
  await test.setAutomine(false)
  const batch = [
    await usdcTransfer(sender, usdc, dep[4], 1_000_000n),
    await ethTransfer(sender, dep[4], parseEther('0.25')),
    await usdcTransfer(sender, usdc, dep[1], 3_000_000n),
    await usdcTransfer(sender, usdc, stranger, 4_000_000n),
  ]
  await test.mine({ blocks: 1 })
  await test.setAutomine(true)
  for (const h of batch) await mined(h)
  ;[sent.sameBlockUsdcDep4, sent.sameBlockEthDep4, sent.sameBlockUsdcDep1] = batch as [Hex, Hex, Hex]

  // the caller scans only to confirmed depth: the head minus the registry's confirmations
  const last = await clients.publicClient.getBlockNumber({ cacheTime: 0 })
  await test.mine({ blocks: CONFIRMATIONS })
  toBlock = (await clients.publicClient.getBlockNumber({ cacheTime: 0 })) - BigInt(info.confirmations)
  expect(toBlock).toBe(last)
})

afterAll(async () => {
  await chain?.stop()
})

const scan = (over: Partial<Parameters<typeof scanDeposits>[0]> = {}) =>
  scanDeposits({
    chain: 'base',
    client: clients.publicClient,
    fromBlock,
    toBlock,
    tokens: info.tokens,
    isDepositAddress,
    ignoreFrom,
    ...over,
  })

describe('scanDeposits on a real anvil node with TestUSDC', () => {
  it('the node runs with the chain id we chose', async () => {
    expect(await clients.publicClient.getChainId()).toBe(CHAIN_ID)
    expect(chain.chainId).toBe(CHAIN_ID)
  })

  it('finds exactly the transfers into our deposit addresses, with amounts and hd indexes', async () => {
    const { deposits, stats } = await scan()
    const summary = deposits.map((d) => [d.txHash, d.token, d.to, d.hdIndex, d.amountBaseUnits])
    expect(summary).toEqual([
      [sent.usdcToDep0, 'USDC', dep[0], 1000, 25_500_000n],
      [sent.ethToDep1, 'ETH', dep[1], 1001, parseEther('0.5')],
      [sent.mintToDep2, 'USDC', dep[2], 1002, 7_000_000n],
      [sent.sameBlockUsdcDep4, 'USDC', dep[4], 77_777, 1_000_000n],
      [sent.sameBlockEthDep4, 'ETH', dep[4], 77_777, parseEther('0.25')],
      [sent.sameBlockUsdcDep1, 'USDC', dep[1], 1001, 3_000_000n],
    ])
    const mint = deposits.find((d) => d.txHash === sent.mintToDep2)
    expect(mint?.from).toBe(zeroAddress)
    expect(deposits.find((d) => d.txHash === sent.usdcToDep0)?.from).toBe(sender.address)
    expect(stats.dustIgnored).toBe(2)
    for (const d of deposits) {
      expect(d.chain).toBe('base')
      expect(d.blockNumber >= fromBlock && d.blockNumber <= toBlock).toBe(true)
      expect(typeof d.amountBaseUnits).toBe('bigint')
    }
  })

  it('a reverted transfer, a foreign token, dust and the gas top-up are not deposits', async () => {
    const { deposits } = await scan()
    const hashes = new Set(deposits.map((d) => d.txHash))
    for (const h of [
      sent.revertedUsdc,
      sent.revertedEth,
      sent.fakeTokenToDep0,
      sent.usdcDust,
      sent.ethDust,
      sent.gasTopUp,
      sent.usdcToOutsider,
      sent.ethToStranger,
    ]) {
      expect(hashes.has(h as Hex)).toBe(false)
    }
  })

  it('log indexes are the block positions of the Transfer logs; native transfers take the reserved slot', async () => {
    const { deposits } = await scan()
    const block = deposits.filter((d) => d.blockHash === deposits.at(-1)?.blockHash)
    expect(block.map((d) => [d.token, d.logIndex, d.transactionIndex])).toEqual([
      ['USDC', 0, 0],
      ['ETH', NATIVE_TRANSFER_LOG_INDEX, 1],
      ['USDC', 1, 2],
    ])
    const keys = deposits.map(key)
    expect(new Set(keys).size).toBe(keys.length)
    expect(keys.every((k) => /^tx:base:0x[0-9a-f]{64}:\d+$/.test(k))).toBe(true)
    for (const d of deposits) {
      const receipt = await clients.publicClient.getTransactionReceipt({ hash: d.txHash })
      expect(receipt.blockHash).toBe(d.blockHash)
      if (d.token === 'USDC') expect(receipt.logs.map((l) => l.logIndex)).toContain(d.logIndex)
    }
  })

  it('re-scanning the same range returns the same deposits under the same keys', async () => {
    const first = await scan()
    const second = await scan()
    expect(second.deposits).toEqual(first.deposits)
    expect(second.deposits.map(key)).toEqual(first.deposits.map(key))
  })

  it('scanning in small pieces (one block per eth_getLogs, two blocks in flight) finds the same set', async () => {
    const whole = await scan()
    const pieces = await scan({ limits: { maxBlocksPerLogsCall: 1, maxLogsCallsInFlight: 3, maxBlocksInFlight: 2 } })
    expect(pieces.deposits).toEqual(whole.deposits)
    const halves = [
      ...(await scan({ toBlock: fromBlock + 5n })).deposits,
      ...(await scan({ fromBlock: fromBlock + 6n })).deposits,
    ]
    expect(halves).toEqual(whole.deposits)
  })

  it('a log answer above maxLogsPerCall halves the range until it fits, then fails on a single block', async () => {
    const whole = await scan()
    const small = await scan({ limits: { maxLogsPerCall: 3 } })
    expect(small.deposits).toEqual(whole.deposits)
    expect(small.stats.callsByMethod.eth_getLogs).toBeGreaterThan(1)
    // the block with three Transfer logs cannot be answered in pieces of two
    await expect(scan({ limits: { maxLogsPerCall: 2 } })).rejects.toBeInstanceOf(LogsLimitError)
  })

  it('costs one head check, one eth_getLogs per chunk, one block fetch per block and one receipt per candidate', async () => {
    const { stats } = await scan()
    const blocks = Number(toBlock - fromBlock + 1n)
    expect(stats.blocks).toBe(blocks)
    expect(stats.callsByMethod).toEqual({
      eth_blockNumber: 1,
      eth_getLogs: 1,
      eth_getBlockByNumber: blocks,
      // candidates: the two ETH deposits and the reverted payment (the top-up and dust never get here)
      eth_getTransactionReceipt: 3,
    })
    expect(stats.rpcCalls).toBe(1 + 1 + blocks + 3)
  })

  it('only the watched tokens are read: without native ETH no block is fetched', async () => {
    const { deposits, stats } = await scan({ tokens: info.tokens.filter((t) => t.symbol === 'USDC') })
    expect(deposits.every((d) => d.token === 'USDC')).toBe(true)
    expect(deposits).toHaveLength(4)
    expect(stats.callsByMethod.eth_getBlockByNumber).toBeUndefined()
  })

  it('refuses a range that is empty, too wide, or beyond the head', async () => {
    await expect(scan({ fromBlock: 10n, toBlock: 9n })).rejects.toBeInstanceOf(ScanRangeError)
    await expect(scan({ fromBlock: 0n, toBlock: 20_000n })).rejects.toBeInstanceOf(ScanRangeError)
    const head = await clients.publicClient.getBlockNumber({ cacheTime: 0 })
    await expect(scan({ fromBlock: head, toBlock: head + 1n })).rejects.toBeInstanceOf(ScanRangeError)
  })
})
