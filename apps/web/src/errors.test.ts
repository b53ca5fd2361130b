import { join } from 'node:path'
import { ApiError } from '@wh/client'
import { describe, expect, it } from 'vitest'
import { apiErrorCodes } from '../test/error-codes'
import { errorText, SENTENCES, sentenceOf } from './errors'

const ROOT = join(import.meta.dirname, '../../..')

describe('every error the API answers reads as a sentence', () => {
  const codes = apiErrorCodes(ROOT)

  it('reads the codes from the source, each way one is written', () => {
    // a property, a BusinessRuleError's super, the error plugin's `code` variable, a withdrawal failure
    for (const c of ['UNAUTHORIZED', 'WITHDRAWAL_BELOW_MINIMUM', 'PAYLOAD_TOO_LARGE', 'REVERTED', 'NO_SOLVENCY_RUN'])
      expect(codes, c).toContain(c)
    expect(codes.length).toBeGreaterThan(80)
  })

  it('has a sentence for every code the API can answer, and none for a code it never answers', () => {
    expect(codes.filter((c) => !Object.hasOwn(SENTENCES, c))).toEqual([])
    expect(Object.keys(SENTENCES).filter((c) => !codes.includes(c))).toEqual([])
  })

  it('fills the details in, and reads whole without them', () => {
    for (const code of codes) {
      const text = sentenceOf(code) ?? ''
      expect(text, code).toMatch(/^[A-Z].*[.!]$/s)
      expect(text, code).not.toMatch(/undefined|null|NaN|\[object/)
    }
    expect(sentenceOf('WITHDRAWAL_BELOW_MINIMUM', { minAmount: '0.003', asset: 'ETH', minUsd: '10' })).toBe(
      'The smallest withdrawal is 0.003 ETH (10 USD).',
    )
    expect(sentenceOf('INSUFFICIENT_FREE_BALANCE', { currency: 'USDC', freeBalance: '1250500000' })).toBe(
      'Not enough free balance: you have 1,250.50 USDC free to use.',
    )
  })

  it('never shows a raw code: an ApiError reads as its sentence, an unknown code as the API message', () => {
    const err = (code: string, message = 'm') => new ApiError({ statusCode: 409, code, error: 'Conflict', message })
    expect(errorText(err('WHEEL_ALREADY_RUNNING'))).toBe(SENTENCES.WHEEL_ALREADY_RUNNING)
    expect(errorText(err('SOMETHING_NEW', 'a new rule refused it'))).toBe(
      'The request was refused: a new rule refused it.',
    )
    expect(errorText(new TypeError('Failed to fetch'))).toMatch(/could not be reached/)
  })
})
