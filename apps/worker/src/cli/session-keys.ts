/**
 * The exchange session keys' lifecycle (docs/operations.md "Exchange session keys"):
 *
 *   tsx src/cli/session-keys.ts list
 *   tsx src/cli/session-keys.ts new --out <file>                          a key pair; the file gets the key (0600)
 *   tsx src/cli/session-keys.ts grant --duty trading|payout --key <address> [--days 90] --out <file>
 *   tsx src/cli/session-keys.ts retire --key <address> --out <file>
 *   tsx src/cli/session-keys.ts whitelist [--add <address>]… [--remove <address>]… --out <file>
 *   tsx src/cli/session-keys.ts sign <file>           (the owner's key on stdin; the operator's machine only)
 *   tsx src/cli/session-keys.ts submit <file> --signature <0x…>
 *
 * `grant`, `retire` and `whitelist` prepare what only the owner may sign, into a file: the typed data an
 * owner EOA signs (`sign`, or any wallet's eth_signTypedData_v4) and the L1 call a multisig owner
 * proposes instead. `submit` sends it with the owner's signature. Reads the worker's environment (not
 * `sign`, which reads nothing but the file and stdin); prints one JSON line, never a key (`new` writes
 * its key to the file only). Exit 0 done, 1 refused, 2 bad usage.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { DeriveClient, type KeyDuty, type PreparedOwnerAction } from '@wh/exchange'
import { checkSessionKeys, parsePrepared, prepareGrant, prepareRetire, signAsOwner } from '@wh/subaccounts'
import { type Address, getAddress, type Hex, isAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { parseCli, usageError } from './args'

const USAGE =
  'usage: session-keys.ts list | new --out <file> | grant --duty trading|payout --key <address> [--days N] --out <file> | ' +
  'retire --key <address> --out <file> | whitelist [--add <a>]… [--remove <a>]… --out <file> | sign <file> | ' +
  'submit <file> --signature <0x…>'

function usage(message: string): never {
  return usageError(USAGE, message)
}

const { values, positionals } = parseCli(USAGE, {
  allowPositionals: true,
  options: {
    out: { type: 'string' },
    duty: { type: 'string' },
    key: { type: 'string' },
    days: { type: 'string' },
    add: { type: 'string', multiple: true },
    remove: { type: 'string', multiple: true },
    signature: { type: 'string' },
  },
})
const [command, file] = positionals

function address(v: string | undefined, name: string): Address {
  if (!v || !isAddress(v)) usage(`${name} must be an address`)
  return getAddress(v)
}

function write(p: PreparedOwnerAction): void {
  if (!values.out) usage('--out <file> is required')
  writeFileSync(values.out, `${JSON.stringify(p, null, 2)}\n`, { mode: 0o600 })
  console.log(JSON.stringify({ prepared: p.kind, file: values.out, owner: p.owner, typedDataHash: p.typedDataHash }))
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8').trim()
}

if (command === 'new') {
  if (!values.out) usage('--out <file> is required: the key is written there, never printed')
  const key = generatePrivateKey()
  writeFileSync(values.out, `${key}\n`, { mode: 0o600, flag: 'wx' })
  console.log(JSON.stringify({ address: privateKeyToAccount(key).address, file: values.out }))
  process.exit(0)
}
if (command === 'sign') {
  // the operator's machine: the prepared file and the owner's key on stdin, no configuration read
  if (!file) usage('sign <file>')
  const signature = await signAsOwner(parsePrepared(readFileSync(file, 'utf8')), (await readStdin()) as Hex)
  console.log(JSON.stringify({ signature }))
  process.exit(0)
}

loadDotEnvLocal()
const config = loadConfigOrExit(processEnv)
const exchange = new DeriveClient({
  httpUrl: config.exchange.httpUrl,
  wallet: config.exchange.walletAddress,
  sessionKey: config.keys.sessionPrivateKey,
  chainId: config.exchange.chainId,
})
const now = Date.now()
try {
  if (command === 'list') {
    const checked = await checkSessionKeys(config, exchange, now)
    if ('unreadable' in checked) throw new Error(`the exchange could not be read: ${checked.unreadable}`)
    console.log(JSON.stringify({ keys: checked.reports, problems: checked.lines }))
  } else if (command === 'grant') {
    if (values.duty !== 'trading' && values.duty !== 'payout') usage('--duty trading or payout')
    const days = values.days === undefined ? undefined : Number(values.days)
    if (days !== undefined && !(Number.isInteger(days) && days > 0)) usage('--days must be a whole number of days')
    const key = address(values.key, '--key')
    write(prepareGrant(config, exchange, { duty: values.duty as KeyDuty, key, nowMs: now, ...(days && { days }) }))
  } else if (command === 'retire') {
    write(prepareRetire(exchange, { key: address(values.key, '--key'), nowMs: now }))
  } else if (command === 'whitelist') {
    const add = (values.add ?? []).map((a) => address(a, '--add'))
    const remove = (values.remove ?? []).map((a) => address(a, '--remove'))
    write(exchange.prepareWhitelist({ add, remove }))
  } else if (command === 'submit') {
    if (!file || !values.signature) usage('submit <file> --signature <0x…>')
    const result = await exchange.submitOwnerAction(parsePrepared(readFileSync(file, 'utf8')), values.signature as Hex)
    console.log(JSON.stringify({ submitted: true, result }))
  } else usage(`unknown command ${command ?? ''}`)
} catch (e) {
  console.log(JSON.stringify({ error: e instanceof Error ? e.message : String(e) }))
  process.exit(1)
}
process.exit(0)
