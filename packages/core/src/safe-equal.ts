import { createHash, timingSafeEqual } from 'node:crypto'

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()

/**
 * Whether two secrets (a bearer token, a proxy's shared secret) are equal, in time that depends on
 * neither: both are hashed to 32 bytes first, so not even the length of the expected one shows.
 *
 * @example
 *   if (!safeEqual(request.headers.authorization ?? '', `Bearer ${token}`)) throw new UnauthorizedError()
 */
export function safeEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected))
}
