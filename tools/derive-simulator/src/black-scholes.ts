/**
 * Black-Scholes (zero rates: Derive marks against the forward, and the simulator keeps rates at
 * zero) for marks, deltas and the greeks of tickers. Floats are fine here: these are market
 * data, quantised to the tick before any balance moves.
 */
export type OptionType = 'C' | 'P'

/** Standard normal CDF via the Abramowitz–Stegun 7.1.26 erf approximation (|error| < 1.5e-7). */
export function normCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2
  const t = 1 / (1 + 0.3275911 * z)
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
  const erf = 1 - poly * Math.exp(-z * z)
  return x >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf)
}

export function normPdf(x: number): number {
  return Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI)
}

export interface Greeks {
  price: number
  delta: number
  gamma: number
  vega: number
  theta: number
}

/** Price and greeks of one option; at or past expiry the intrinsic value and a 0/±1 delta. */
export function blackScholes(spot: number, strike: number, years: number, vol: number, type: OptionType): Greeks {
  if (years <= 0 || vol <= 0) {
    const itm = type === 'C' ? spot > strike : spot < strike
    const price = Math.max(type === 'C' ? spot - strike : strike - spot, 0)
    return { price, delta: itm ? (type === 'C' ? 1 : -1) : 0, gamma: 0, vega: 0, theta: 0 }
  }
  const sq = vol * Math.sqrt(years)
  const d1 = (Math.log(spot / strike) + 0.5 * vol * vol * years) / sq
  const d2 = d1 - sq
  const call = spot * normCdf(d1) - strike * normCdf(d2)
  const price = type === 'C' ? call : call - spot + strike
  const delta = type === 'C' ? normCdf(d1) : normCdf(d1) - 1
  const gamma = normPdf(d1) / (spot * sq)
  const vega = (spot * normPdf(d1) * Math.sqrt(years)) / 100
  const theta = -(spot * normPdf(d1) * vol) / (2 * Math.sqrt(years)) / 365
  return { price, delta, gamma, vega, theta }
}
