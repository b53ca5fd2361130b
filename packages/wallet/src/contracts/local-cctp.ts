/**
 * CCTP's stand-ins on the local nodes (docs/chains.md "The L2 route"): TestMessageTransmitterV2 and
 * TestTokenMessengerV2 on every chain, at one address each as Circle's are (a dedicated deployer's nonces 0 and 1
 * on every fresh node), each messenger knowing the others by domain and each chain's TestUSDC paired with the
 * others' (a burn of base's USDC mints ethereum's), the messenger a minter of its chain's TestUSDC, and the
 * transmitters trusting one attester. Test and local-run only.
 */
import { CHAIN_NAMES, type ChainName } from '@wh/config'
import { type Address, getAddress, getContractAddress, type Hex, keccak256, toHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { CCTP_DOMAINS } from '../cctp/constants'
import { addressToBytes32 } from '../cctp/message'
import { deployContract } from './deploy'
import { localClients } from './local-chains'
import { testMessageTransmitterV2Abi, testMessageTransmitterV2Bytecode } from './test-message-transmitter-v2.gen'
import { testTokenMessengerV2Abi, testTokenMessengerV2Bytecode } from './test-token-messenger-v2.gen'
import { testUsdcAbi } from './test-usdc.gen'

/** The public, development-only key that deploys the stand-ins (funded by the caller's key on each node). */
export const LOCAL_CCTP_DEPLOYER_KEY: Hex = keccak256(toHex('wheelhouse local cctp deployer (development only)'))
const DEPLOYER = privateKeyToAccount(LOCAL_CCTP_DEPLOYER_KEY).address
/** The stand-ins' addresses on a node where the deployer's first two transactions made them. */
export const LOCAL_CCTP: Readonly<{ messageTransmitter: Address; tokenMessenger: Address }> = Object.freeze({
  messageTransmitter: getContractAddress({ from: DEPLOYER, nonce: 0n }),
  tokenMessenger: getContractAddress({ from: DEPLOYER, nonce: 1n }),
})
/** The V2 message and burn-message versions the stand-ins speak. */
export const LOCAL_CCTP_VERSION = 1
const DEPLOYER_GAS_WEI = 10n ** 18n

type Clients = ReturnType<typeof localClients>

async function mined(c: Clients, hash: Hex): Promise<void> {
  const r = await c.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  if (r.status !== 'success') throw new Error(`local CCTP setup transaction ${hash} reverted`)
}

/** Deploys the pair on one node at the deterministic addresses, unless they are there already. */
async function deployPair(rpcUrl: string, funderKey: Hex, chain: ChainName, attester: Address): Promise<boolean> {
  const funder = localClients(rpcUrl, funderKey)
  const code = await funder.publicClient.getCode({ address: LOCAL_CCTP.tokenMessenger })
  if (code && code !== '0x') return false
  if ((await funder.publicClient.getBalance({ address: DEPLOYER })) < DEPLOYER_GAS_WEI / 10n)
    await mined(
      funder,
      await funder.walletClient.sendTransaction({ to: DEPLOYER, value: DEPLOYER_GAS_WEI, chain: null }),
    )
  const deployer = localClients(rpcUrl, LOCAL_CCTP_DEPLOYER_KEY)
  if ((await deployer.publicClient.getTransactionCount({ address: DEPLOYER })) !== 0)
    throw new Error(
      `the local CCTP deployer has used its first nonces on ${chain}: the stand-ins would not be where expected`,
    )
  const transmitter = await deployContract(
    deployer.walletClient,
    deployer.publicClient,
    { abi: testMessageTransmitterV2Abi, bytecode: testMessageTransmitterV2Bytecode },
    [CCTP_DOMAINS[chain], LOCAL_CCTP_VERSION, getAddress(attester)],
  )
  const messenger = await deployContract(
    deployer.walletClient,
    deployer.publicClient,
    { abi: testTokenMessengerV2Abi, bytecode: testTokenMessengerV2Bytecode },
    [transmitter, LOCAL_CCTP_VERSION],
  )
  if (transmitter !== LOCAL_CCTP.messageTransmitter || messenger !== LOCAL_CCTP.tokenMessenger)
    throw new Error(`the local CCTP stand-ins on ${chain} are not at their expected addresses`)
  return true
}

/** The messenger knows every other chain's messenger and token, and mints this chain's TestUSDC. */
async function link(rpcUrl: string, funderKey: Hex, chain: ChainName, usdc: Readonly<Record<ChainName, Address>>) {
  const deployer = localClients(rpcUrl, LOCAL_CCTP_DEPLOYER_KEY)
  const write = async (functionName: 'addRemoteTokenMessenger' | 'linkTokenPair', args: readonly unknown[]) =>
    mined(
      deployer,
      await deployer.walletClient.writeContract({
        address: LOCAL_CCTP.tokenMessenger,
        abi: testTokenMessengerV2Abi,
        functionName,
        args,
        chain: null,
      } as never),
    )
  for (const other of CHAIN_NAMES) {
    if (other === chain) continue
    await write('addRemoteTokenMessenger', [CCTP_DOMAINS[other], addressToBytes32(LOCAL_CCTP.tokenMessenger)])
    await write('linkTokenPair', [usdc[chain], CCTP_DOMAINS[other], addressToBytes32(usdc[other])])
  }
  const funder = localClients(rpcUrl, funderKey)
  await mined(
    funder,
    await funder.walletClient.writeContract({
      address: usdc[chain],
      abi: testUsdcAbi,
      functionName: 'configureMinter',
      args: [LOCAL_CCTP.tokenMessenger, true],
      chain: null,
    }),
  )
}

/**
 * The stand-ins on every node, linked to each other and to each chain's TestUSDC (owned by `funderKey`'s account,
 * which also pays the deployer's gas). Nodes where they are already deployed are left as they are.
 */
export async function setUpLocalCctp(
  nodes: Readonly<Record<ChainName, { readonly rpcUrl: string }>>,
  usdc: Readonly<Record<ChainName, Address>>,
  o: { readonly funderKey: Hex; readonly attester: Address },
): Promise<{ messageTransmitter: Address; tokenMessenger: Address; deployed: ChainName[] }> {
  const deployed = await Promise.all(
    CHAIN_NAMES.map(async (chain) => {
      const fresh = await deployPair(nodes[chain].rpcUrl, o.funderKey, chain, o.attester)
      if (fresh) await link(nodes[chain].rpcUrl, o.funderKey, chain, usdc)
      return fresh ? [chain] : []
    }),
  )
  return { ...LOCAL_CCTP, deployed: deployed.flat() }
}
