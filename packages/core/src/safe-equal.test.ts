import { describe, expect, it } from 'vitest'
import { safeEqual } from './safe-equal'

describe('safeEqual', () => {
  it('is true only for the same string, whatever the lengths', () => {
    expect(safeEqual('Bearer s3cret', 'Bearer s3cret')).toBe(true)
    expect(safeEqual('', '')).toBe(true)
    expect(safeEqual('Bearer s3cret', 'Bearer s3creT')).toBe(false)
    expect(safeEqual('Bearer s3cret', 'Bearer s3cret ')).toBe(false)
    expect(safeEqual('', 'x')).toBe(false)
    // compared as UTF-8, not as UTF-16 units or Latin-1 bytes
    expect(safeEqual('é', 'é')).toBe(true)
    expect(safeEqual('é', 'e\u0301')).toBe(false)
  })
})
