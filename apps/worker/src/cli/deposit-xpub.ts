/**
 * Prints DEPOSIT_XPUB for the configured MASTER_MNEMONIC: the BIP-32 extended public key of
 * m/44'/60'/0', from which the API derives the deposit addresses m/44'/60'/0'/0/{hd_index} that
 * the worker's keyring signs for (docs/architecture.md "Least privilege").
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/deposit-xpub.ts
 *
 * Reads MASTER_MNEMONIC only (from the environment, .env.local filled in), so it works while
 * DEPOSIT_XPUB is wrong. Prints the xpub alone on stdout; never the mnemonic. Exit code 1 when the
 * mnemonic is missing or invalid.
 */
import { ConfigError, depositXpubOf, loadDotEnvLocal, loadMasterMnemonic, processEnv } from '@wh/config'

loadDotEnvLocal()
try {
  console.log(depositXpubOf(loadMasterMnemonic(processEnv())))
} catch (e) {
  if (!(e instanceof ConfigError)) throw e
  console.error(e.message)
  process.exit(1)
}
