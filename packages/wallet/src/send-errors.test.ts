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
import { sendFailureOf } from './send-errors'

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
