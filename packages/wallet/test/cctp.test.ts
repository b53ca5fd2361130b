/**
 * CCTP's stand-ins and the local attester on four local nodes (docs/chains.md "The L2 route"): a burn on base is
 * emitted with an empty nonce and executed finality, attested by the local attester as Circle's Iris does (pending,
 * then complete with the nonce, the executed finality and a fast transfer's fee filled in), and minted once on
 * ethereum by the burn's destination caller; a message not signed by the attester, minted twice or by another caller
 * is refused; a fast transfer whose max fee is below the fast fee is attested as a standard one.
 */
import { LOCAL_ATTESTER_ADDRESS, type RunningAttester, startCctpAttester } from '@wh/attester'
import { type LocalChains, startLocalChains, TEST_PRIVATE_KEYS } from '@wh/testkit'
import { type Address, encodeFunctionData, type Hex, parseEventLogs, zeroAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  addressToBytes32,
  CCTP_DOMAINS,
  type ChainName,
  decodeCctpMessage,
  deployTestUsdcs,
  FINALITY_FAST,
  FINALITY_STANDARD,
  fetchAttestation,
  fetchCctpFees,
  localClients,
  MESSAGE_TRANSMITTER_V2_ABI,
  setUpLocalCctp,
  TOKEN_MESSENGER_V2_ABI,
  testUsdcAbi,
} from '../src/index'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const funder = privateKeyToAccount(TEST_PRIVATE_KEYS[0]).address

describe('CCTP stand-ins and the local attester', () => {
  let chains: LocalChains
  let usdc: Record<ChainName, Address>
  let cctp: { messageTransmitter: Address; tokenMessenger: Address }
  let attester: RunningAttester

  beforeAll(async () => {
    chains = await startLocalChains()
    usdc = await deployTestUsdcs(chains, TEST_PRIVATE_KEYS[0], { mint: USDC(1_000_000) })
    cctp = await setUpLocalCctp(chains, usdc, { funderKey: TEST_PRIVATE_KEYS[0], attester: LOCAL_ATTESTER_ADDRESS })
    attester = await startCctpAttester()
    attester.watch(
      (['ethereum', 'base'] as const).map((c) => ({
        domain: CCTP_DOMAINS[c],
        rpcUrl: chains[c].rpcUrl,
        transmitter: cctp.messageTransmitter,
      })),
    )
  }, 120_000)
  afterAll(async () => {
    await attester?.close()
    await chains?.stop()
  })

  async function send(chain: ChainName, to: Address, data: Hex, key: Hex = TEST_PRIVATE_KEYS[0]) {
    const c = localClients(chains[chain].rpcUrl, key)
    const hash = await c.walletClient.sendTransaction({ to, data, chain: null })
    return c.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }
  const balance = (chain: ChainName, who: Address) =>
    localClients(chains[chain].rpcUrl, TEST_PRIVATE_KEYS[0]).publicClient.readContract({
      address: usdc[chain],
      abi: testUsdcAbi,
      functionName: 'balanceOf',
      args: [who],
    })
  async function burn(amount: bigint, maxFee: bigint, finality: number) {
    await send(
      'base',
      usdc.base,
      encodeFunctionData({ abi: testUsdcAbi, functionName: 'approve', args: [cctp.tokenMessenger, amount] }),
    )
    const me = addressToBytes32(funder)
    return send(
      'base',
      cctp.tokenMessenger,
      encodeFunctionData({
        abi: TOKEN_MESSENGER_V2_ABI,
        functionName: 'depositForBurn',
        args: [amount, CCTP_DOMAINS.ethereum, me, usdc.base, me, maxFee, finality],
      }),
    )
  }
  const receive = (message: Hex, attestation: Hex, key: Hex = TEST_PRIVATE_KEYS[0]) =>
    send(
      'ethereum',
      cctp.messageTransmitter,
      encodeFunctionData({
        abi: MESSAGE_TRANSMITTER_V2_ABI,
        functionName: 'receiveMessage',
        args: [message, attestation],
      }),
      key,
    ).catch((e: Error) => e)

  it('burns on base, is attested with the nonce and the fast fee filled in, and mints once on ethereum', async () => {
    const ethBefore = await balance('ethereum', funder)
    const r = await burn(USDC(1_000), USDC(1), FINALITY_FAST)
    expect(r.status).toBe('success')
    const [deposit] = parseEventLogs({ abi: TOKEN_MESSENGER_V2_ABI, eventName: 'DepositForBurn', logs: r.logs })
    expect(deposit?.args).toMatchObject({
      amount: USDC(1_000),
      burnToken: usdc.base,
      minFinalityThreshold: FINALITY_FAST,
    })
    const [sent] = parseEventLogs({ abi: MESSAGE_TRANSMITTER_V2_ABI, eventName: 'MessageSent', logs: r.logs })
    const emitted = { message: sent?.args.message as Hex }
    const m0 = decodeCctpMessage(emitted.message)
    expect(m0).toMatchObject({ sourceDomain: 6, destinationDomain: 0, finalityThresholdExecuted: 0 })
    expect(m0.nonce).toBe(`0x${'0'.repeat(64)}`)
    expect(m0.burn).toMatchObject({
      amount: USDC(1_000),
      mintRecipient: funder,
      messageSender: funder,
      feeExecuted: 0n,
    })

    attester.set({ status: 'hold' })
    expect(
      await fetchAttestation({ baseUrl: attester.url }, { sourceDomain: 6, txHash: r.transactionHash }),
    ).toMatchObject({
      state: 'pending',
    })
    attester.set({ status: 'up' })
    const a = await fetchAttestation({ baseUrl: attester.url }, { sourceDomain: 6, txHash: r.transactionHash })
    if (a.state !== 'complete') throw new Error(`not complete: ${JSON.stringify(a)}`)
    const m = decodeCctpMessage(a.message)
    // Circle's fast fee, 1.3 bps of 1,000 USDC: 0.13 USDC, within the burn's 1 USDC maximum
    expect(m).toMatchObject({ finalityThresholdExecuted: FINALITY_FAST, nonce: a.nonce })
    expect(m.burn.feeExecuted).toBe(130_000n)

    // another caller than the burn's destination caller is refused; the right one mints amount − fee, once
    expect(await receive(a.message, a.attestation, TEST_PRIVATE_KEYS[1])).toBeInstanceOf(Error)
    const minted = await receive(a.message, a.attestation)
    expect(minted).not.toBeInstanceOf(Error)
    expect((await balance('ethereum', funder)) - ethBefore).toBe(USDC(1_000) - 130_000n)
    expect(await receive(a.message, a.attestation)).toBeInstanceOf(Error)
  })

  it('refuses a message the attester did not sign, and attests a fast burn under the fast fee as standard', async () => {
    const r = await burn(USDC(10), 0n, FINALITY_FAST)
    // it waits for finality as a standard one, saying why (Iris's delayReason)
    attester.set({ standardConfirmations: 5 })
    expect(await fetchAttestation({ baseUrl: attester.url }, { sourceDomain: 6, txHash: r.transactionHash })).toEqual({
      state: 'pending',
      reason: 'pending_confirmations (insufficient_fee)',
    })
    attester.set({ standardConfirmations: 0 })
    const a = await fetchAttestation({ baseUrl: attester.url }, { sourceDomain: 6, txHash: r.transactionHash })
    if (a.state !== 'complete') throw new Error('not complete')
    expect(decodeCctpMessage(a.message)).toMatchObject({ finalityThresholdExecuted: FINALITY_STANDARD })
    expect(decodeCctpMessage(a.message).burn.feeExecuted).toBe(0n)
    const forged = await privateKeyToAccount(TEST_PRIVATE_KEYS[3]).sign({ hash: `0x${'11'.repeat(32)}` })
    expect(await receive(a.message, forged)).toBeInstanceOf(Error)
    expect(await receive(a.message, a.attestation)).not.toBeInstanceOf(Error)
  })

  it("answers Circle's fee read, a 404 for an unknown burn, and 503 while down", async () => {
    expect(await fetchCctpFees({ baseUrl: attester.url }, { sourceDomain: 6, destinationDomain: 0 })).toEqual({
      fast: 130n,
      standard: 0n,
    })
    expect(
      await fetchAttestation({ baseUrl: attester.url }, { sourceDomain: 6, txHash: `0x${'ab'.repeat(32)}` }),
    ).toEqual({ state: 'pending', reason: 'not observed yet' })
    attester.set({ status: 'down' })
    expect(
      await fetchAttestation({ baseUrl: attester.url }, { sourceDomain: 6, txHash: `0x${'ab'.repeat(32)}` }),
    ).toMatchObject({
      state: 'unavailable',
      reason: 'HTTP 503',
    })
    attester.set({ status: 'up' })
    expect(zeroAddress).not.toBe(cctp.tokenMessenger)
  })
})
