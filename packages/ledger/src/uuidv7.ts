import { randomFillSync } from 'node:crypto'

const pool = new Uint8Array(16 * 256)
let offset = pool.length

/**
 * RFC 9562 UUIDv7: millisecond time then random bits. Event ids made this way are ordered by
 * creation, so the primary key index of ledger_events is appended at its right edge instead of
 * being written all over (random v4 ids) at 25k inserts per second.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  if (offset === pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const b = pool.subarray(offset, offset + 16)
  offset += 16
  let ms = nowMs
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256
    ms = Math.floor(ms / 256)
  }
  b[6] = (b[6]! & 0x0f) | 0x70
  b[8] = (b[8]! & 0x3f) | 0x80
  const h = Buffer.from(b).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}
