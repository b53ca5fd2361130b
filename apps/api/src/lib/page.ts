/**
 * Cursor pagination shared by the list routes (GET /withdrawals, GET /positions): newest first by
 * (created_at, id); the cursor is the last row's created_at as Postgres prints it (microseconds)
 * and its id, base64url. A cursor this API did not issue is a 400, never a query Postgres refuses.
 */
import { AppError } from '@wh/core'

export class InvalidCursorError extends AppError {
  constructor() {
    super({ code: 'INVALID_CURSOR', statusCode: 400, message: 'cursor is not one this API issued' })
  }
}
export class InvalidLimitError extends AppError {
  constructor(max: number) {
    super({
      code: 'VALIDATION_ERROR',
      statusCode: 400,
      message: `querystring/limit must be an integer from 1 to ${max}`,
    })
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const PG_TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?[+-](\d{2})(?::(\d{2}))?$/

/**
 * Each field of the cursor's time in range: the pattern alone lets through 2024-02-30, year 0 or an
 * offset of +99, which Postgres refuses in the query (a 500 instead of a 400).
 */
function inRange(pgTimestamp: string): boolean {
  const m = PG_TIMESTAMP_RE.exec(pgTimestamp)
  if (!m) return false
  const [date, time] = [pgTimestamp.slice(0, 10), pgTimestamp.slice(11, 19)]
  const t = new Date(`${date}T${time}Z`)
  return (
    !Number.isNaN(t.getTime()) &&
    t.toISOString().slice(0, 19) === `${date}T${time}` &&
    !date.startsWith('0000') &&
    Number(m[1]) <= 15 &&
    Number(m[2] ?? 0) <= 59
  )
}

/** The page size asked for: Ajv coerces `?limit=Infinity` to a number its integer check lets through. */
export function pageLimit(limit: number | undefined, fallback: number, max: number): number {
  const n = limit ?? fallback
  if (!Number.isSafeInteger(n) || n < 1 || n > max) throw new InvalidLimitError(max)
  return n
}

export function encodeCursor(row: { created_at_text: string; id: string }): string {
  return Buffer.from(`${row.created_at_text}|${row.id}`).toString('base64url')
}

export function decodeCursor(cursor: string): { createdAt: string; id: string } {
  const [createdAt, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|')
  if (rest.length > 0 || !createdAt || !id || !inRange(createdAt) || !UUID_RE.test(id)) throw new InvalidCursorError()
  return { createdAt, id }
}
