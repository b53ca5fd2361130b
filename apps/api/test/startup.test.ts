import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ENV_SPEC, SECRET_ENV_NAMES } from '@wh/config'
import { testEnv } from '@wh/testkit'
import { describe, expect, it } from 'vitest'

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const WORKER_MAIN = fileURLToPath(new URL('../../worker/src/main.ts', import.meta.url))

function start(
  main: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', main], {
      env: { PATH: process.env.PATH, WH_ENV_FILE: 'none', ...env } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += String(d)
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stderr })
    })
  })
}

const REQUIRED = Object.entries(ENV_SPEC)
  .filter(([, s]) => !('default' in s) && !('optional' in s && s.optional))
  .map(([k]) => k)

describe('start-up with a bad environment', () => {
  // one process per variable would take minutes; the first, a secret and the last are spawned,
  // the rest are covered by loadConfig's own tests (packages/config)
  const sample = [REQUIRED[0], 'JWT_SECRET', 'MASTER_MNEMONIC', REQUIRED[REQUIRED.length - 1]] as string[]
  for (const name of sample) {
    it(`the API exits non-zero naming ${name} when it is missing, printing no secret`, async () => {
      const env = testEnv()
      delete env[name]
      const { code, stderr } = await start(MAIN, env)
      expect(code).not.toBe(0)
      expect(stderr).toContain(`${name}: is required but missing`)
      for (const secret of SECRET_ENV_NAMES) {
        const value = env[secret]
        if (value && value.length > 8) expect(stderr).not.toContain(value)
      }
    })
  }

  it('the worker exits non-zero naming every bad variable at once', async () => {
    const env = testEnv({ JWT_SECRET: 'short', RECONCILE_MODE: 'yolo' })
    delete env.CACHE_URL
    const { code, stderr } = await start(WORKER_MAIN, env)
    expect(code).not.toBe(0)
    expect(stderr).toContain('JWT_SECRET')
    expect(stderr).toContain('RECONCILE_MODE')
    expect(stderr).toContain('CACHE_URL')
    expect(stderr).not.toContain('short')
  })
})
