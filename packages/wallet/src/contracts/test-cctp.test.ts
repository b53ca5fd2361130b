import { type AbiEvent, type AbiFunction, toEventSelector, toFunctionSelector } from 'viem'
import { describe, expect, it } from 'vitest'
import { compileContract, TEST_MESSAGE_TRANSMITTER_V2, TEST_TOKEN_MESSENGER_V2 } from '../../scripts/solc'
import { MESSAGE_TRANSMITTER_V2_ABI, TOKEN_MESSENGER_V2_ABI } from '../cctp/abi'
import { testMessageTransmitterV2Abi, testMessageTransmitterV2Bytecode } from './test-message-transmitter-v2.gen'
import { testTokenMessengerV2Abi, testTokenMessengerV2Bytecode } from './test-token-messenger-v2.gen'

const selectors = (abi: readonly unknown[]) =>
  (abi as (AbiFunction | AbiEvent | { type: string })[]).map((e) =>
    e.type === 'event'
      ? `event ${toEventSelector(e as AbiEvent)}`
      : e.type === 'function'
        ? `fn ${toFunctionSelector(e as AbiFunction)}`
        : e.type,
  )

describe('the CCTP stand-ins (docs/chains.md "The L2 route")', () => {
  it('are what the pinned solc makes of their sources (else: pnpm --filter @wh/wallet compile:contracts)', () => {
    for (const [spec, abi, bytecode] of [
      [TEST_TOKEN_MESSENGER_V2, testTokenMessengerV2Abi, testTokenMessengerV2Bytecode],
      [TEST_MESSAGE_TRANSMITTER_V2, testMessageTransmitterV2Abi, testMessageTransmitterV2Bytecode],
    ] as const) {
      const fresh = compileContract(spec)
      expect(abi).toEqual(fresh.abi)
      expect(bytecode).toBe(fresh.bytecode)
    }
  }, 120_000)

  it("speak every function and event of Circle's published interface the service uses, with the same signatures", () => {
    // signatures and indexed fields of TokenMessengerV2 / MessageTransmitterV2 as Circle publishes them (cctp/abi.ts)
    for (const [published, standIn] of [
      [TOKEN_MESSENGER_V2_ABI, testTokenMessengerV2Abi],
      [MESSAGE_TRANSMITTER_V2_ABI, testMessageTransmitterV2Abi],
    ] as const) {
      const ours = new Set(selectors(standIn))
      for (const s of selectors(published)) expect(ours).toContain(s)
      for (const e of published.filter((x) => x.type === 'event')) {
        const mine = (standIn as readonly AbiEvent[]).find((x) => x.type === 'event' && x.name === e.name)
        expect(mine?.inputs.map((i) => [i.type, i.indexed ?? false])).toEqual(e.inputs.map((i) => [i.type, i.indexed]))
      }
    }
  })
})
