import {
  type Abi,
  type Account,
  type Address,
  type Chain,
  getAddress,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem'
import { testOnchainActionManagerAbi, testOnchainActionManagerBytecode } from './test-onchain-action-manager.gen'
import { testUsdcAbi, testUsdcBytecode } from './test-usdc.gen'
import { testWithdrawalOutboxAbi, testWithdrawalOutboxBytecode } from './test-withdrawal-outbox.gen'

/** A deployment did not produce a contract (reverted, or no address in the receipt). */
export class ContractDeployError extends Error {
  readonly code = 'CONTRACT_DEPLOY_FAILED'
  constructor(
    readonly txHash: `0x${string}`,
    readonly status: string,
  ) {
    super(`contract deployment ${txHash} failed (${status})`)
    this.name = 'ContractDeployError'
  }
}

/**
 * Gas to give a TestUSDC mint instead of an estimate. The estimate is exact for the state it sees:
 * when a sweep empties the recipient before the mint's block, the mint writes a fresh balance slot
 * (some 17k gas more) and an estimated mint runs out of gas. This covers both cases with room.
 */
export const TEST_USDC_MINT_GAS = 100_000n

/**
 * Deploys TestUSDC (6 decimals, owner-mintable) from the wallet client's account, which becomes
 * its owner, and waits for the receipt. Test and local-run only: never on a real chain.
 *
 * @example
 *   const usdc = await deployTestUsdc(walletClient, publicClient)
 *   await walletClient.writeContract({ address: usdc, abi: testUsdcAbi, functionName: 'mint', args: [to, 5_000_000n] })
 */
export async function deployTestUsdc(
  walletClient: WalletClient<Transport, Chain | undefined, Account>,
  publicClient: PublicClient,
): Promise<Address> {
  return deployed(walletClient, publicClient, { abi: testUsdcAbi, bytecode: testUsdcBytecode })
}

/** Deploys a contract (with its constructor arguments, if any) and waits for it; its EIP-55 address. */
export async function deployContract(
  walletClient: WalletClient<Transport, Chain | undefined, Account>,
  publicClient: PublicClient,
  artifact: { readonly abi: Abi; readonly bytecode: Hex },
  args: readonly unknown[] = [],
): Promise<Address> {
  return getAddress(await deployed(walletClient, publicClient, artifact, args))
}

/** Deploys a contract (with its constructor arguments, if any) and waits for it; its address as the receipt gives it. */
async function deployed(
  walletClient: WalletClient<Transport, Chain | undefined, Account>,
  publicClient: PublicClient,
  artifact: { readonly abi: Abi; readonly bytecode: Hex },
  args: readonly unknown[] = [],
): Promise<Address> {
  const hash = await walletClient.deployContract({
    abi: artifact.abi,
    bytecode: artifact.bytecode,
    args,
    account: walletClient.account,
    chain: walletClient.chain,
  })
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new ContractDeployError(hash, receipt.status)
  return receipt.contractAddress
}

/**
 * Deploys the stand-in of Derive v3's L1 OnchainActionManager (contracts/TestOnchainActionManager.sol)
 * and maps each protocol asset to the ERC-20 a deposit of it pulls. Test and local-run only.
 */
export async function deployTestOnchainActionManager(
  walletClient: WalletClient<Transport, Chain | undefined, Account>,
  publicClient: PublicClient,
  assets: readonly { readonly asset: Address; readonly token: Address }[],
): Promise<Address> {
  const manager = getAddress(
    await deployed(walletClient, publicClient, {
      abi: testOnchainActionManagerAbi,
      bytecode: testOnchainActionManagerBytecode,
    }),
  )
  for (const { asset, token } of assets) {
    const set = await walletClient.writeContract({
      address: manager,
      abi: testOnchainActionManagerAbi,
      functionName: 'setAsset',
      args: [asset, token],
      account: walletClient.account,
      chain: walletClient.chain,
    })
    const r = await publicClient.waitForTransactionReceipt({ hash: set, pollingInterval: 50 })
    if (r.status !== 'success') throw new ContractDeployError(set, r.status)
  }
  return manager
}

/** One write of the deployer, waited for; a revert is a failed deployment. */
async function setUp(
  walletClient: WalletClient<Transport, Chain | undefined, Account>,
  publicClient: PublicClient,
  call: { address: Address; abi: Abi; functionName: string; args: readonly unknown[] },
): Promise<void> {
  const hash = await walletClient.writeContract({ ...call, account: walletClient.account, chain: walletClient.chain })
  const r = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  if (r.status !== 'success') throw new ContractDeployError(hash, r.status)
}

/**
 * Deploys the stand-in of Derive v3's L1 WithdrawalOutbox (contracts/TestWithdrawalOutbox.sol) with
 * `verifiableApp` as its one payer (the simulator's operator key), registers each asset with the
 * manager stand-in as its vault, and has the manager approve the outbox for the token, so
 * withdrawals are paid out of the deposits. The wallet client must be the manager's owner (its deployer).
 */
export async function deployTestWithdrawalOutbox(
  walletClient: WalletClient<Transport, Chain | undefined, Account>,
  publicClient: PublicClient,
  o: {
    readonly verifiableApp: Address
    readonly manager: Address
    readonly assets: readonly { readonly asset: Address; readonly token: Address; readonly decimals: number }[]
  },
): Promise<Address> {
  const artifact = { abi: testWithdrawalOutboxAbi, bytecode: testWithdrawalOutboxBytecode }
  const outbox = getAddress(await deployed(walletClient, publicClient, artifact, [getAddress(o.verifiableApp)]))
  for (const { asset, token, decimals } of o.assets) {
    const args = [asset, token, o.manager, decimals, 1_000_000n]
    await setUp(walletClient, publicClient, { address: outbox, abi: artifact.abi, functionName: 'registerAsset', args })
    await setUp(walletClient, publicClient, {
      address: o.manager,
      abi: testOnchainActionManagerAbi,
      functionName: 'approveToken',
      args: [token, outbox],
    })
  }
  return outbox
}
