/**
 * The logger a deposit run writes to, typed by what it calls (the worker's pino logger fits): the
 * package never builds one.
 */
export interface RunLog {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
}
