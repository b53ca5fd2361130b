/**
 * Deposit-scan benchmark: 100,000 deposit addresses, 1,000 blocks on a real anvil node
 * with TestUSDC, a sprinkle of ETH and USDC transfers per block (about one in twenty to a deposit
 * address). Prints RPC calls, HTTP requests and time per scan, and checks every scan finds
 * exactly the deposits that were sent.
 *
 *   pnpm --filter @wh/wallet bench                 1,000 blocks, 100,000 addresses (about 50 s)
 *   pnpm --filter @wh/wallet bench 200 10000       smaller: blocks, then addresses
 */
import { prng, randomAddressFrom, rpcBatch, startChain, TEST_MNEMONIC } from '@wh/testkit'
import { type Address, createWalletClient, type Hex, http, numberToHex } from 'viem'
import { mnemonicToAccount } from 'viem/accounts'
import {
  buildChainRegistry,
  type ChainInfo,
  createChainClients,
  DepositKeyring,
  deployTestUsdc,
  depositAddressLookup,
  type ScanLimits,
  scanDeposits,
  testUsdcAbi,
} from '../src/index'

const BLOCKS = Number(process.argv[2] ?? 1_000)
const ADDRESSES = Number(process.argv[3] ?? 100_000)
/** distinct deposit addresses that receive something; derived from the keyring like real ones */
const RECEIVERS = Math.min(1_000, ADDRESSES)
const MAX_TRANSFERS_PER_KIND_PER_BLOCK = 20 // uniform 0..20 ETH and 0..20 USDC transfers a block
const DEPOSIT_SHARE = 0.05
const SENDERS = 10 // anvil's unlocked dev accounts

const random = prng(4)
const randomAddress = () => randomAddressFrom(random)

const t0 = performance.now()
const chain = await startChain({ accounts: SENDERS })
const startMs = performance.now() - t0
const rpcUrls = { ethereum: chain.rpcUrl, optimism: chain.rpcUrl, base: chain.rpcUrl, arbitrum: chain.rpcUrl }
try {
  // --- the chain: TestUSDC, minted to every sender
  const deployer = mnemonicToAccount(TEST_MNEMONIC)
  const bootstrap = createChainClients(
    buildChainRegistry({ rpcUrls }, { ethereum: { chainId: chain.chainId } }).get('ethereum') as ChainInfo,
  )
  const wallet = createWalletClient({ account: deployer, chain: bootstrap.chain, transport: http(chain.rpcUrl) })
  const usdc = await deployTestUsdc(wallet, bootstrap.publicClient)
  const senders = Array.from({ length: SENDERS }, (_, i) => mnemonicToAccount(TEST_MNEMONIC, { addressIndex: i }))
  for (const s of senders) {
    const hash = await wallet.writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [s.address, 10n ** 15n],
    })
    await bootstrap.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }

  // --- the deposit addresses: RECEIVERS derived from the keyring, the rest synthetic
  const t1 = performance.now()
  const keyring = DepositKeyring.fromMnemonic(TEST_MNEMONIC).publicOnly({ cacheSize: RECEIVERS })
  const receivers = Array.from({ length: RECEIVERS }, (_, i) => {
    const hdIndex = 1_000 + i * 97
    return { hdIndex, address: keyring.address(hdIndex) }
  })
  const deriveMs = performance.now() - t1
  const entries: [string, number][] = receivers.map((r) => [r.address, r.hdIndex])
  // Synthetic entries stand for the other users: the scan's work depends on the lookup's size,
  // not on how its addresses were made (deriving 100,000 real ones takes about a minute here).
  for (let i = 0; entries.length < ADDRESSES; i++) entries.push([randomAddress(), 10_000_000 + i])
  const t2 = performance.now()
  const lookup100k = depositAddressLookup(entries)
  const lookupMs = performance.now() - t2
  const lookupReceivers = depositAddressLookup(entries.slice(0, RECEIVERS))

  // --- 1,000 blocks with a sprinkle of transfers
  await rpcBatch(chain.rpcUrl, [{ method: 'evm_setAutomine', params: [false] }])
  const fromBlock =
    BigInt(((await rpcBatch(chain.rpcUrl, [{ method: 'eth_blockNumber', params: [] }])) as Hex[])[0] as Hex) + 1n
  const expected = { ETH: { count: 0, sum: 0n }, USDC: { count: 0, sum: 0n } }
  let transactions = 0
  const t3 = performance.now()
  for (let b = 0; b < BLOCKS; b++) {
    const calls: { method: string; params: unknown[] }[] = []
    for (const kind of ['ETH', 'USDC'] as const) {
      const n = Math.floor(random() * (MAX_TRANSFERS_PER_KIND_PER_BLOCK + 1))
      for (let k = 0; k < n; k++) {
        const toOurs = random() < DEPOSIT_SHARE
        const to = toOurs ? (receivers[Math.floor(random() * RECEIVERS)]?.address as Address) : randomAddress()
        const from = senders[Math.floor(random() * SENDERS)]?.address as Address
        // ETH in 0.01..1 ETH (above the 0.001 minimum), USDC in 1..10,000 USDC
        const amount =
          kind === 'ETH'
            ? 10n ** 16n * BigInt(1 + Math.floor(random() * 100))
            : 1_000_000n * BigInt(1 + Math.floor(random() * 10_000))
        if (toOurs) {
          expected[kind].count++
          expected[kind].sum += amount
        }
        const tx =
          kind === 'ETH'
            ? { from, to, value: numberToHex(amount), gas: numberToHex(21_000) }
            : {
                from,
                to: usdc,
                gas: numberToHex(80_000),
                // transfer(address,uint256)
                data: `0xa9059cbb${to.slice(2).toLowerCase().padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`,
              }
        calls.push({ method: 'eth_sendTransaction', params: [tx] })
      }
    }
    transactions += calls.length
    if (calls.length > 0) await rpcBatch(chain.rpcUrl, calls)
    await rpcBatch(chain.rpcUrl, [{ method: 'evm_mine', params: [] }])
  }
  const buildMs = performance.now() - t3
  const toBlock = fromBlock + BigInt(BLOCKS) - 1n

  // --- the scans
  let httpRequests = 0
  const info = buildChainRegistry({ rpcUrls }, { ethereum: { usdc, chainId: chain.chainId } }).get(
    'ethereum',
  ) as ChainInfo
  const { publicClient } = createChainClients(info, {
    onFetchRequest: () => {
      httpRequests++
    },
  })
  const rows: string[][] = []
  async function run(
    label: string,
    lookup: (a: Hex) => number | undefined,
    addresses: number,
    ticks: number,
    tokens = info.tokens,
    limits: Partial<ScanLimits> = {},
  ) {
    httpRequests = 0
    let calls = 0
    const found = { ETH: { count: 0, sum: 0n }, USDC: { count: 0, sum: 0n } }
    const per = BigInt(BLOCKS / ticks)
    const start = performance.now()
    for (let t = 0n; t < BigInt(ticks); t++) {
      const from = fromBlock + t * per
      const { deposits, stats } = await scanDeposits({
        chain: 'ethereum',
        client: publicClient,
        fromBlock: from,
        toBlock: t === BigInt(ticks - 1) ? toBlock : from + per - 1n,
        tokens,
        isDepositAddress: lookup,
        limits,
      })
      calls += stats.rpcCalls
      for (const d of deposits) {
        found[d.token].count++
        found[d.token].sum += d.amountBaseUnits
      }
    }
    const ms = performance.now() - start
    for (const token of tokens.map((t) => t.symbol)) {
      if (found[token].count !== expected[token].count || found[token].sum !== expected[token].sum) {
        throw new Error(`${label}: found ${found[token].count} ${token} deposits, sent ${expected[token].count}`)
      }
    }
    rows.push([
      label,
      addresses.toLocaleString('en-US'),
      String(ticks),
      String(found.ETH.count + found.USDC.count),
      String(calls),
      String(httpRequests),
      (ms / ticks).toFixed(0),
      ms.toFixed(0),
    ])
  }

  await run('ETH + USDC, one scan', lookup100k, ADDRESSES, 1)
  await run(`ETH + USDC, 10 ticks of ${BLOCKS / 10} blocks`, lookup100k, ADDRESSES, 10)
  await run('ETH + USDC, receivers only in the set', lookupReceivers, RECEIVERS, 1)
  await run(
    'USDC only, one scan',
    lookup100k,
    ADDRESSES,
    1,
    info.tokens.filter((t) => t.contract !== null),
  )
  await run('ETH + USDC, 100 blocks per eth_getLogs', lookup100k, ADDRESSES, 1, info.tokens, {
    maxBlocksPerLogsCall: 100,
  })

  const header = ['scenario', 'addresses', 'scans', 'deposits', 'RPC calls', 'HTTP requests', 'ms/scan', 'ms total']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')
  console.log(
    `\nanvil ready in ${startMs.toFixed(0)} ms; ${BLOCKS} blocks, ${transactions} transactions ` +
      `(${expected.ETH.count} ETH + ${expected.USDC.count} USDC deposits) built in ${(buildMs / 1000).toFixed(1)} s`,
  )
  console.log(
    `lookup of ${ADDRESSES.toLocaleString('en-US')} addresses built in ${lookupMs.toFixed(0)} ms ` +
      `(${RECEIVERS} derived from the keyring in ${deriveMs.toFixed(0)} ms: ${(deriveMs / RECEIVERS).toFixed(2)} ms each)\n`,
  )
  console.log(line(header))
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'))
  for (const r of rows) console.log(line(r))
} finally {
  await chain.stop()
}
