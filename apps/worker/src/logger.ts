/** The worker's pino logger: main.ts and the tests build it here, so a test sees what production logs. */
import { redactLogLine, serializeError } from '@wh/core'
import pino, { type DestinationStream, type Logger } from 'pino'

/**
 * Fields that hold the worker's dependencies or configuration (and with them every signing key):
 * never printed, whoever passes them to a log call by mistake.
 */
export const REDACTED_PATHS = ['deps', 'config', 'keys', '*.deps', '*.config', '*.keys']

export function workerLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { process: 'worker' },
    // an error keeps its class, message, stack, code and cause: not the options or deps attached to it
    serializers: { err: serializeError },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // every line, whatever put a URL in it: an RPC URL's path and query hold the provider's key
    hooks: { streamWrite: redactLogLine },
  }
  return destination ? pino(options, destination) : pino(options)
}
