/** Errors of the public market reads (docs/market-data.md): the API answers them in its error shape. */
import { AppError } from '@wh/core'

/** `:asset` is not an underlying with market data. */
export class UnknownAssetError extends AppError {
  constructor(asset: string) {
    super({ code: 'UNKNOWN_ASSET', statusCode: 404, message: `Unknown asset ${asset}`, details: { asset } })
  }
}

/** from/to of a chart that cannot be answered (empty, reversed, or more candles than allowed). */
export class InvalidChartRangeError extends AppError {
  constructor(message: string) {
    super({ code: 'INVALID_CHART_RANGE', statusCode: 400, message })
  }
}
