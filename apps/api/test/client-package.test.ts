/**
 * @wh/client outside the monorepo: `pnpm pack` (whose prepack builds dist/), the tarball installed
 * by npm into a fresh project in the OS temp folder with viem and @types/node from the registry,
 * a small consumer compiled by TypeScript in strict mode against the published declarations only,
 * then run by plain Node: it signs in to the real API over HTTP and reads the deposit address.
 * Skipped, saying why, when the npm registry cannot be reached.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import ts from 'typescript'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, DOMAIN, startApi } from './support'

const run = promisify(execFile)
const REPO = join(import.meta.dirname, '..', '..', '..')
const CLIENT = join(REPO, 'packages', 'client')
const installed = (dir: string, name: string): string =>
  JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version

/** What a frontend developer would write, knowing only the published package. */
const CONSUMER = `
import {
  ApiClient,
  type DepositAddressResponse,
  type Eip1193Provider,
  type KeyValueStorage,
  type Session,
  signIn,
  TokenStore,
} from '@wh/client'
import { hexToString } from 'viem/utils'
import { privateKeyToAccount } from 'viem/accounts'

// a declaration lost on the way would turn these into any, and the program would still compile
type IsAny<T> = 0 extends 1 & T ? true : false
const typed: [IsAny<DepositAddressResponse>, IsAny<Session>, IsAny<typeof signIn>] = [false, false, false]

class MemoryStorage implements KeyValueStorage {
  readonly map = new Map<string, string>()
  getItem = (k: string): string | null => this.map.get(k) ?? null
  setItem = (k: string, v: string): void => void this.map.set(k, v)
  removeItem = (k: string): void => void this.map.delete(k)
}

const [baseUrl, domain, key] = process.argv.slice(2) as [string, string, \`0x\${string}\`]
const account = privateKeyToAccount(key)
// an injected wallet as a browser extension answers: the address in lowercase
const wallet: Eip1193Provider = {
  async request({ method, params }) {
    if (method === 'eth_requestAccounts') return [account.address.toLowerCase()]
    if (method === 'eth_chainId') return '0x2105'
    if (method === 'personal_sign') return account.signMessage({ message: hexToString((params as [\`0x\${string}\`])[0]) })
    throw new Error(\`unsupported \${method}\`)
  },
}
const store = new TokenStore(new MemoryStorage())
const session: Session = await signIn({ apiBaseUrl: baseUrl, provider: wallet, store, domain, uri: \`https://\${domain}\` })
const api = new ApiClient({ baseUrl, token: () => store.read(account.address) })
const deposit: DepositAddressResponse = await api.depositAddress()
console.log(JSON.stringify({ address: session.address, token: session.token, depositAddress: deposit.address, typed }))
`

const npm = (dir: string, ...args: string[]) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: dir })

/** `pnpm pack` into `dir` and `npm install` of the tarball there; the installed manifest. */
async function packAndInstall(dir: string): Promise<Record<string, unknown>> {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  // the pack (whose prepack builds) and the registry's packages at the same time
  const [packed] = await Promise.all([
    run('pnpm', ['pack', '--pack-destination', dir], { cwd: CLIENT }),
    npm(dir, 'install', `viem@${installed(CLIENT, 'viem')}`, `@types/node@${installed(REPO, '@types/node')}`),
  ])
  const tarball = packed.stdout.trim().split('\n').at(-1) as string
  expect(tarball).toMatch(/wh-client-.+\.tgz$/)
  const { stdout: listing } = await run('tar', ['tzf', tarball])
  const unexpected = listing
    .split('\n')
    .filter((f) => f && !/^package\/(dist\/[\w-]+\.(js|d\.ts)|package\.json|README\.md)$/.test(f))
  expect(unexpected).toEqual([])
  await npm(dir, 'install', tarball)
  return JSON.parse(readFileSync(join(dir, 'node_modules/@wh/client/package.json'), 'utf8'))
}

/**
 * consumer.ts compiled as tsc would in `dir` (strict): the diagnostics of the consumer and of every
 * declaration of the package in full (viem's only as far as they are used), the files read from
 * outside `dir` (TypeScript's own lib aside), and consumer.js written.
 */
function compileConsumer(dir: string): { diagnostics: string[]; fromElsewhere: string[] } {
  const entry = join(dir, 'consumer.ts')
  writeFileSync(entry, CONSUMER)
  const options: ts.CompilerOptions = {
    strict: true,
    skipLibCheck: false,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    outDir: dir,
  }
  const host = ts.createCompilerHost(options)
  host.getCurrentDirectory = () => dir // type roots are looked up from there
  const program = ts.createProgram([entry], options, host)
  const checked = program
    .getSourceFiles()
    .filter((f) => f.fileName === entry || f.fileName.startsWith(join(dir, 'node_modules/@wh/client/')))
  expect(checked.length).toBeGreaterThan(8)
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...checked.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ].map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
  const fromElsewhere = program
    .getSourceFiles()
    .filter((f) => !program.isSourceFileDefaultLibrary(f) && !f.fileName.startsWith(dir))
    .map((f) => f.fileName)
  expect(program.emit(program.getSourceFile(entry)).emitSkipped).toBe(false)
  return { diagnostics, fromElsewhere }
}

describe('@wh/client packed, installed and used outside the monorepo', () => {
  let api: Api
  let baseUrl: string
  let dir: string
  let registryDown: string | undefined
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wh-client-consumer-'))
    const [started] = await Promise.all([
      startApi(),
      run('npm', ['ping', '--fetch-retries=0'], { timeout: 20_000 }).catch((e: Error & { stderr?: string }) => {
        const said = e.stderr?.split('\n').find((l) => /ERR!? (code|errno|network)|ECONN|ENOTFOUND|ETIMEDOUT/.test(l))
        registryDown = (said ?? e.message.split('\n')[0] ?? 'failed').trim()
      }),
    ])
    api = started
    baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 })
  })
  afterAll(async () => {
    await api?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('packs dist only, installs without the workspace, compiles in strict mode and signs in with plain Node', async (ctx) => {
    if (registryDown) ctx.skip(`the npm registry is unreachable (npm ping: ${registryDown}): nothing to install from`)
    expect(relative(REPO, dir).startsWith('..')).toBe(true)
    const manifest = await packAndInstall(dir)
    expect(manifest.private).toBeUndefined()
    expect(manifest.dependencies).toBeUndefined()
    expect(manifest.peerDependencies).toEqual({ viem: expect.any(String) })
    expect((manifest.exports as Record<string, unknown>)['.']).toEqual({
      types: './dist/index.d.ts',
      import: './dist/index.js',
    })
    for (const gone of ['siwe', 'ethers', '@wh/api-schemas', 'typebox'])
      expect(existsSync(join(dir, 'node_modules', gone)), gone).toBe(false)

    const { diagnostics, fromElsewhere } = compileConsumer(dir)
    expect(diagnostics).toEqual([])
    expect(fromElsewhere).toEqual([])

    const secret = generatePrivateKey()
    const { stdout } = await run(process.execPath, [join(dir, 'consumer.js'), baseUrl, DOMAIN, secret], { cwd: dir })
    const out = JSON.parse(stdout)
    expect(out).toMatchObject({ address: privateKeyToAccount(secret).address, typed: [false, false, false] })
    expect(out.depositAddress).toMatch(/^0x[0-9a-fA-F]{40}$/)
    // the address it read is the one the API gives that token
    const direct = await api.app.inject({
      method: 'GET',
      url: '/deposit-address',
      headers: { authorization: `Bearer ${out.token}` },
    })
    expect(out.depositAddress).toBe(direct.json().address)
  }, 120_000)
})
