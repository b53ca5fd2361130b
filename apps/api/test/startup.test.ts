import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { generateMnemonic } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { API_ENV_NAMES, depositXpubOf, ENV_SPEC, SECRET_ENV_NAMES } from '@wh/config'
import { TEST_DEPOSIT_XPUB, testEnv } from '@wh/testkit'
import { describe, expect, it } from 'vitest'

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const WORKER_MAIN = fileURLToPath(new URL('../../worker/src/main.ts', import.meta.url))
const XPUB_CLI = fileURLToPath(new URL('../../worker/src/cli/deposit-xpub.ts', import.meta.url))

function start(
  main: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', main], {
      env: { PATH: process.env.PATH, WH_ENV_FILE: 'none', ...env } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    let stdout = ''
    child.stderr.on('data', (d) => {
      stderr += String(d)
    })
    child.stdout.on('data', (d) => {
      stdout += String(d)
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stderr, stdout })
    })
  })
}

const REQUIRED = Object.entries(ENV_SPEC)
  .filter(([, s]) => !('default' in s) && !('optional' in s && s.optional))
  .map(([k]) => k)
/** what the API requires: its own variables without a default, DEPOSIT_XPUB included */
const API_REQUIRED = (API_ENV_NAMES as readonly string[]).filter((n) => REQUIRED.includes(n) || n === 'DEPOSIT_XPUB')

describe('start-up with a bad environment', () => {
  // one process per variable would take minutes; the first, a secret, an RPC URL and the xpub are
  // spawned, the rest are covered by loadApiConfig's own tests (packages/config)
  const sample = [API_REQUIRED[0], 'JWT_SECRET', 'RPC_URL_ARBITRUM', 'DEPOSIT_XPUB'] as string[]
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

  it('the API in production refuses a private key or the mnemonic in its environment, naming it only', async () => {
    const env = testEnv({ NODE_ENV: 'production' })
    const { code, stderr } = await start(MAIN, env)
    expect(code).not.toBe(0)
    for (const name of ['MASTER_PRIVATE_KEY', 'SESSION_PRIVATE_KEY', 'MASTER_MNEMONIC'])
      expect(stderr).toContain(`${name}: must not be set for the API when NODE_ENV=production`)
    expect(stderr).not.toContain((env.MASTER_PRIVATE_KEY as string).slice(2))
    expect(stderr).not.toContain('test test')
  })

  it("the worker refuses to start with a DEPOSIT_XPUB that is not its mnemonic's, printing neither", async () => {
    const mnemonic = generateMnemonic(wordlist)
    // the API would derive TEST_MNEMONIC's addresses, which this worker's mnemonic cannot sweep
    const env = testEnv({ MASTER_MNEMONIC: mnemonic, DEPOSIT_XPUB: TEST_DEPOSIT_XPUB })
    expect(depositXpubOf(mnemonic)).not.toBe(TEST_DEPOSIT_XPUB)
    const { code, stderr } = await start(WORKER_MAIN, env)
    expect(code).not.toBe(0)
    expect(stderr).toMatch(/DEPOSIT_XPUB: is not MASTER_MNEMONIC's .* cannot sweep/)
    expect(stderr).not.toContain(TEST_DEPOSIT_XPUB)
    expect(stderr).not.toContain(mnemonic.split(' ').slice(0, 2).join(' '))
  })

  it("the deposit-xpub CLI prints the mnemonic's DEPOSIT_XPUB, and nothing of the mnemonic", async () => {
    const mnemonic = generateMnemonic(wordlist)
    const { code, stdout } = await start(XPUB_CLI, { MASTER_MNEMONIC: mnemonic })
    expect(code).toBe(0)
    expect(stdout.trim()).toBe(depositXpubOf(mnemonic))
    const missing = await start(XPUB_CLI, {})
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('MASTER_MNEMONIC: is required but missing')
  })

  it('the worker and the API refuse EXCHANGE_PROTOCOL=v2 at start-up, saying Derive retired it', async () => {
    for (const main of [WORKER_MAIN, MAIN]) {
      const { code, stderr } = await start(main, testEnv({ EXCHANGE_PROTOCOL: 'v2' }))
      expect(code, main).not.toBe(0)
      expect(stderr, main).toMatch(/EXCHANGE_PROTOCOL: Derive retired its v2 protocol and the service speaks v3 only/)
    }
  })

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
