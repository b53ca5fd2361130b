import { AppError } from '@wh/core'

/** A half-open time range [from, to) over occurred_at. */
export interface Period {
  readonly from: Date
  readonly to: Date
}

export class InvalidPeriodError extends AppError {
  constructor(message: string) {
    super({ code: 'INVALID_PERIOD', statusCode: 400, message })
  }
}

export function assertPeriod(p: { from?: Date | undefined; to?: Date | undefined }): void {
  for (const d of [p.from, p.to])
    if (d !== undefined && (!(d instanceof Date) || Number.isNaN(d.getTime())))
      throw new InvalidPeriodError('from and to must be valid dates')
  if (p.from && p.to && p.from.getTime() > p.to.getTime()) throw new InvalidPeriodError('from must not be after to')
}
