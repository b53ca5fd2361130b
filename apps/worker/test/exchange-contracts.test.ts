/**
 * Derive's L1 contracts come from configuration only, checked at start (docs/exchange-v3.md
 * "Contracts"): on an anvil that calls itself Sepolia (Derive's testnet chain id), the stand-ins of the
 * OnchainActionManager and the WithdrawalOutbox pass (code, and their published ABI calls answer); an
 * address without code, a contract that is not the one named, or an RPC of another chain stop the
 * worker; an address other than Derive's published testnet one is a warning. On a chain that is not
 * Derive's the problems are warnings only.
 */
import { loadConfig } from '@wh/config'
import { V3_TESTNET_CHAIN_ID, V3_TESTNET_CONTRACTS } from '@wh/exchange'
import { checkExchangeContracts } from '@wh/subaccounts'
import { type RunningChain, startChain, testEnv } from '@wh/testkit'
import { deployTestOnchainActionManager, deployTestUsdc, deployTestWithdrawalOutbox } from '@wh/wallet'
import { type Address, createPublicClient, createWalletClient, getAddress, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const deployer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')
const ASSET: Address = '0x6879287835A86F50f784313dBEd5E5cCC5bb8481'

describe("Derive's L1 contracts, from configuration, checked at start", () => {
  let chain: RunningChain
  let manager: Address
  let outbox: Address
  let usdc: Address
  const configOf = (o: Record<string, string>, c = chain) =>
    loadConfig(
      testEnv({
        EXCHANGE_CHAIN_RPC_URL: c.rpcUrl,
        EXCHANGE_CHAIN_ID: String(c.chainId),
        EXCHANGE_DEPOSIT_MANAGER_ADDRESS: manager,
        EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS: outbox,
        ...o,
      }),
    )

  beforeAll(async () => {
    chain = await startChain({ chainId: V3_TESTNET_CHAIN_ID })
    const transport = http(chain.rpcUrl)
    const walletClient = createWalletClient({ account: deployer, transport })
    const publicClient = createPublicClient({ transport })
    usdc = await deployTestUsdc(walletClient, publicClient)
    manager = await deployTestOnchainActionManager(walletClient, publicClient, [{ asset: ASSET, token: usdc }])
    outbox = await deployTestWithdrawalOutbox(walletClient, publicClient, {
      verifiableApp: privateKeyToAccount(generatePrivateKey()).address,
      manager,
      assets: [{ asset: ASSET, token: usdc, decimals: 6 }],
    })
  })
  afterAll(async () => chain?.stop())

  it('the stand-ins pass; not being the published testnet addresses is a warning, not a stop', async () => {
    const r = await checkExchangeContracts(configOf({}))
    expect(r.problems).toEqual([])
    expect(r.warnings).toEqual([
      expect.stringMatching(/^EXCHANGE_DEPOSIT_MANAGER_ADDRESS .* is not Derive's published testnet contract \(0xd362/),
      expect.stringMatching(
        /^EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS .* is not Derive's published testnet contract \(0xFbB6/,
      ),
    ])
  })

  it('an address of a set Derive published earlier is named as such (the sources have disagreed)', async () => {
    const docsPageManager = '0x842C2306A17354f58Cb00853Ce3B71fB27F83557'
    const r = await checkExchangeContracts(configOf({ EXCHANGE_DEPOSIT_MANAGER_ADDRESS: docsPageManager }))
    expect(r.problems).toEqual([
      `EXCHANGE_DEPOSIT_MANAGER_ADDRESS (${docsPageManager}) holds no code on the exchange chain`,
    ])
    expect(r.warnings).toEqual([
      `EXCHANGE_DEPOSIT_MANAGER_ADDRESS (${docsPageManager}) is a testnet contract Derive published before ${V3_TESTNET_CONTRACTS.actionManager}, the one it publishes now`,
      expect.stringMatching(/^EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS .* is not Derive's published testnet contract/),
    ])
  })

  it('no code, the wrong contract, the wrong chain: each stops the worker, naming the setting', async () => {
    const nobody = privateKeyToAccount(generatePrivateKey()).address
    expect((await checkExchangeContracts(configOf({ EXCHANGE_DEPOSIT_MANAGER_ADDRESS: nobody }))).problems).toEqual([
      `EXCHANGE_DEPOSIT_MANAGER_ADDRESS (${nobody}) holds no code on the exchange chain`,
    ])
    // the outbox where the manager should be, the token where the outbox should be
    const swapped = configOf({ EXCHANGE_DEPOSIT_MANAGER_ADDRESS: outbox, EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS: usdc })
    expect((await checkExchangeContracts(swapped)).problems).toEqual([
      `EXCHANGE_DEPOSIT_MANAGER_ADDRESS (${outbox}) does not answer publicHeadIndex(): not the contract Derive publishes`,
      `EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS (${getAddress(usdc)}) does not answer VERIFIABLE_APP(): not the contract Derive publishes`,
    ])
    expect((await checkExchangeContracts(configOf({ EXCHANGE_CHAIN_ID: '1' }))).problems).toEqual([
      `EXCHANGE_CHAIN_RPC_URL serves chain ${V3_TESTNET_CHAIN_ID}, not EXCHANGE_CHAIN_ID 1`,
    ])
  })

  it("on a chain that is not Derive's (the local run's) the problems are only warnings; an RPC that does not answer is said", async () => {
    const local = await startChain({ chainId: 901 })
    try {
      const nobody = privateKeyToAccount(generatePrivateKey()).address
      const r = await checkExchangeContracts(configOf({ EXCHANGE_DEPOSIT_MANAGER_ADDRESS: nobody }, local))
      expect(r.problems).toEqual([])
      expect(r.warnings).toContain(`EXCHANGE_DEPOSIT_MANAGER_ADDRESS (${nobody}) holds no code on the exchange chain`)
    } finally {
      await local.stop()
    }
    const down = await checkExchangeContracts(configOf({ EXCHANGE_CHAIN_RPC_URL: 'http://127.0.0.1:9' }))
    expect(down.unreachable).toBeTruthy()
  })
})
