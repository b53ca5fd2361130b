import { AppError, NotFoundError } from '@wh/core'
import { OutboundMayStillMineError, OutboundMinedError, OutboundNotHeldError } from '@wh/wallet'
import { describe, expect, it } from 'vitest'
import { isStateRefusal } from './proposal-actions'
import { StopClearTooSoonError } from './subaccount-stops'

describe('isStateRefusal: what closes a proposal as refused', () => {
  it('the state or the chain refusing the action does; a failure of the setup or a passing one does not', () => {
    const id = '00000000-0000-0000-0000-000000000001'
    for (const refusal of [
      new OutboundNotHeldError(id),
      new OutboundMinedError(id, `0x${'ab'.repeat(32)}`),
      new OutboundMayStillMineError(id, 3, 3, 10n),
    ])
      expect(isStateRefusal(refusal), refusal.code).toBe(true)
    for (const other of [
      new AppError({ code: 'CHAIN_NOT_CONFIGURED', statusCode: 409, message: 'no client for arbitrum' }),
      new NotFoundError('a client for arbitrum'),
      new AppError({ code: 'PROPOSAL_EXPIRED', statusCode: 409, message: 'the proposal expired' }),
      new AppError({ code: 'NOT_ENOUGH_APPROVALS', statusCode: 409, message: 'the proposal lacks approvals' }),
      new StopClearTooSoonError(id),
      // a refusal's code on another class is not one: the set is of classes, not codes
      new AppError({ code: 'OUTBOUND_NOT_HELD', statusCode: 409, message: 'spelled alike' }),
      new Error('connection refused'),
    ])
      expect(isStateRefusal(other), String((other as AppError).code ?? other.message)).toBe(false)
  })
})
