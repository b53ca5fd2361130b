/**
 * The command-line tools' arguments: node:util parseArgs, and on bad usage the reason and the
 * tool's usage line on stderr with exit code 2 (the tools' shared contract; 1 is a refusal).
 */
import { type ParseArgsConfig, parseArgs } from 'node:util'

/** Prints `message` and the usage line, exits 2. */
export function usageError(usage: string, message: string): never {
  console.error(`${message}\n${usage}`)
  process.exit(2)
}

/**
 * The parsed arguments; a usage error when they do not parse. The tool's own checks after parsing
 * call usageError too (through a `function usage(message): never` of its own, which TypeScript
 * narrows on).
 *
 * @example
 *   const { values } = parseCli('usage: tool.ts --run', { options: { run: { type: 'boolean', default: false } } })
 */
export function parseCli<T extends ParseArgsConfig>(usage: string, config: T) {
  try {
    return parseArgs(config)
  } catch (e) {
    return usageError(usage, (e as Error).message)
  }
}

/** A row id as an operator types it (any case): outbound transactions, proposals, stops. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
