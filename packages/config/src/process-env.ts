import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'

/** The repo root's `.env.local`, written by the local run (scripts/dev.sh). */
export const ENV_LOCAL_PATH = resolve(new URL('../../..', import.meta.url).pathname, '.env.local')

/** The process environment. This package is the only reader of process.env (an architecture test enforces it). */
export function processEnv(): Readonly<Record<string, string | undefined>> {
  return process.env
}

/**
 * Fills unset variables from `.env.local` (KEY=VALUE lines). Variables already set win,
 * so an operator's environment always overrides the generated development file. `only` names the
 * variables to take (the API takes API_ENV_NAMES: the file's keys never enter its environment).
 */
export function loadDotEnvLocal(path = ENV_LOCAL_PATH, only?: readonly string[]): boolean {
  // WH_ENV_FILE=none: take the environment as given (tests of start-up, deployments)
  if (process.env.WH_ENV_FILE === 'none' || !existsSync(path)) return false
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*(.*)\s*$/.exec(line)
    if (!m) continue
    const [, key, rawValue] = m as unknown as [string, string, string]
    const value = rawValue.replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1')
    if (only && !only.includes(key)) continue
    if (process.env[key] === undefined) process.env[key] = value
  }
  return true
}
