import {
  ContractFunctionRevertedError,
  EstimateGasExecutionError,
  ExecutionRevertedError,
  erc20Abi,
  HttpRequestError,
  InsufficientFundsError,
  RpcRequestError,
  TimeoutError,
} from 'viem'
import { describe, expect, it } from 'vitest'
import { broadcastRefusalOf, OutboundGasAboveCapError, outboundFailureOf, sendFailureOf } from './send-errors'

const estimate = (cause: Error) =>
  new EstimateGasExecutionError(cause as never, { account: undefined, chain: undefined } as never)

describe('sendFailureOf', () => {
  it('a dry run that reverts will revert again', () => {
    expect(sendFailureOf(estimate(new ExecutionRevertedError({ message: 'execution reverted' })))).toBe('reverts')
    expect(
      sendFailureOf(new ContractFunctionRevertedError({ abi: erc20Abi, functionName: 'transfer', message: 'no' })),
    ).toBe('reverts')
    // a node that answers the revert as a plain JSON-RPC error
    expect(
      sendFailureOf(
        new RpcRequestError({ body: {}, url: 'http://x', error: { code: 3, message: 'execution reverted' } }),
      ),
    ).toBe('reverts')
  })

  it('a sender short of funds waits for a refill, even when the token says so by reverting', () => {
    expect(sendFailureOf(estimate(new InsufficientFundsError()))).toBe('insufficient-funds')
    expect(
      sendFailureOf(
        estimate(new ExecutionRevertedError({ message: 'execution reverted: ERC20: transfer amount exceeds balance' })),
      ),
    ).toBe('insufficient-funds')
  })

  it('the provider failing is never taken for the call failing', () => {
    expect(sendFailureOf(new HttpRequestError({ url: 'http://x', status: 429, details: 'execution reverted' }))).toBe(
      'unavailable',
    )
    expect(sendFailureOf(new TimeoutError({ body: {}, url: 'http://x' }))).toBe('unavailable')
    expect(sendFailureOf(new Error('socket hang up'))).toBe('unavailable')
    expect(sendFailureOf('weird')).toBe('unavailable')
  })
})

/** A node's JSON-RPC error as viem raises it, with the node's own words. */
const node = (message: string, code = -32000) =>
  new RpcRequestError({ body: {}, url: 'http://x', error: { code, message } })

describe('outboundFailureOf: the row’s, the sender’s, or unknown (never "the chain is down")', () => {
  it('reverts, invalid opcodes and gas above the cap are the row’s own failures, in every node’s wording', () => {
    expect(outboundFailureOf(node('execution reverted', 3))).toEqual({ kind: 'row', reason: 'reverts' })
    expect(outboundFailureOf(node('EVM error InvalidFEOpcode', -32603))).toEqual({ kind: 'row', reason: 'invalid' })
    expect(outboundFailureOf(node('invalid opcode: INVALID'))).toEqual({ kind: 'row', reason: 'invalid' })
    expect(outboundFailureOf(node('EVM error InvalidJump', -32603))).toEqual({ kind: 'row', reason: 'invalid' })
    expect(outboundFailureOf(node('Out of gas: gas required exceeds allowance: 50000', -32003))).toEqual({
      kind: 'row',
      reason: 'gas-above-cap',
    })
    expect(outboundFailureOf(node('gas required exceeds allowance (50000)'))).toEqual({
      kind: 'row',
      reason: 'gas-above-cap',
    })
    const capped = new OutboundGasAboveCapError({ chain: 'base', purpose: 'withdrawal', to: '0x0', capGas: 50_000n })
    expect(outboundFailureOf(capped)).toEqual({ kind: 'row', reason: 'gas-above-cap' })
  })

  it('a sender short of funds is the sender’s; an unknown answer is unknown, whatever the provider says', () => {
    expect(outboundFailureOf(node('insufficient funds for gas * price + value'))).toEqual({ kind: 'funds' })
    expect(outboundFailureOf(node('internal error'))).toEqual({ kind: 'unknown' })
    expect(
      outboundFailureOf(new HttpRequestError({ url: 'http://x', status: 502, details: 'EVM error InvalidFEOpcode' })),
    ).toEqual({
      kind: 'unknown',
    })
  })
})

describe('broadcastRefusalOf: what a node’s refusal of signed bytes means', () => {
  it('for good: the gas limit above the block’s or the per-transaction cap, intrinsic gas; the nonce must be filled', () => {
    for (const m of [
      'intrinsic gas too high -- tx.gas_limit > env.block.gas_limit',
      'exceeds block gas limit',
      'intrinsic gas too low',
      'transaction gas limit too high (cap: 16777216, tx: 20000000)',
    ])
      expect(broadcastRefusalOf(node(m)), m).toBe('for-good')
  })

  it('underpriced waits for the replacement, funds for the refill, and the rest is unknown', () => {
    expect(broadcastRefusalOf(node('replacement transaction underpriced'))).toBe('underpriced')
    expect(broadcastRefusalOf(node('max fee per gas less than block base fee'))).toBe('underpriced')
    expect(broadcastRefusalOf(node('insufficient funds for gas * price + value'))).toBe('funds')
    expect(broadcastRefusalOf(node('transaction rejected by policy 7'))).toBe('unknown')
    expect(
      broadcastRefusalOf(new HttpRequestError({ url: 'http://x', status: 400, details: 'exceeds block gas limit' })),
    ).toBe('unknown')
  })
})
