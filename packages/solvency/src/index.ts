/**
 * Solvency (docs/solvency.md): what the platform holds against what it owes, per currency, run
 * continuously by the worker's solvency tick (tick.ts: the run's deps from the process's, its lock
 * and summary), stored with every leg, alerting and stopping the platform on a confirmed deficit.
 */
export * from './chain-assets'
export * from './in-flight'
export * from './legs'
export * from './public'
export * from './run'
export * from './runs'
export * from './tick'
