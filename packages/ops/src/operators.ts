/**
 * Operators are people (docs/operations.md "Operators and roles"), the one owner of `operators` and
 * `operator_sessions`. Each operator has a name, a role and a password kept as a scrypt hash:
 * memory-hard (32 MiB a hash, OWASP's N=2^15 r=8 p=3), in node:crypto, so no dependency and no
 * native build. Operators are created, given a role, disabled and given a password by the schema
 * owner only (migration 0027; the operators CLI connects with DATABASE_OWNER_URL): the API and the
 * worker read the table and open sessions, and cannot make anyone an operator.
 *
 * A sign-in checks the password once and opens a session: a random token whose sha256 is stored
 * until it expires (SESSION_TTL_MS) or the operator signs out; each request of the session costs one
 * index probe, never a hash. Disabling an operator ends their sessions at once (the probe joins the
 * operator and reads `disabled_at`).
 */
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { AppError, NotFoundError } from '@wh/core'
import type { Queryable } from '@wh/db'

/** What each role may do: every role may do what the ones before it may. */
export const OPERATOR_ROLES = ['viewer', 'operator', 'approver'] as const
export type OperatorRole = (typeof OPERATOR_ROLES)[number]

/** Whether `role` includes `needed` (approver ⊇ operator ⊇ viewer). */
export function hasRole(role: OperatorRole, needed: OperatorRole): boolean {
  return OPERATOR_ROLES.indexOf(role) >= OPERATOR_ROLES.indexOf(needed)
}

/** How long a session lasts after sign-in; then the operator signs in again. */
export const SESSION_TTL_MS = 2 * 60 * 60_000
/** The shortest password accepted (NIST SP 800-63B: 15 for a password that is the only factor). */
export const MIN_PASSWORD_LENGTH = 15
/** A name: lower case, 2 to 64 characters (also the database's check). */
export const OPERATOR_NAME_RE = /^[a-z][a-z0-9._@-]{1,63}$/

/** scrypt's cost: N=2^15 (32 MiB with r=8), p=3, OWASP's equivalent of N=2^17 p=1 in a quarter of the memory. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 3, keyLen: 32 } as const
/** Room over the 32 MiB one hash needs (node's default maxmem is exactly 32 MiB, too tight). */
const SCRYPT_MAXMEM = 64 * 1024 * 1024

export interface Operator {
  readonly id: string
  readonly name: string
  readonly role: OperatorRole
  readonly disabled: boolean
  /** false: signs in through the authenticating proxy only */
  readonly hasPassword: boolean
}

/** A name or password the rules refuse (400). */
export class OperatorInputError extends AppError {
  constructor(message: string) {
    super({ code: 'INVALID_OPERATOR', statusCode: 400, message })
  }
}

function scryptHash(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, SCRYPT.keyLen, { ...params, maxmem: SCRYPT_MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  )
}

/** `scrypt$N$r$p$salt$hash`, base64url: the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await scryptHash(password, salt, SCRYPT)
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** Whether `password` matches `stored` (constant time over the hash). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$')
  if (kind !== 'scrypt' || !salt || !hash) return false
  const want = Buffer.from(hash, 'base64url')
  const got = await scryptHash(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) })
  return got.length === want.length && timingSafeEqual(got, want)
}

/** A hash of a password nobody has: checked against for an unknown name, so the answer takes as long. */
let decoy: Promise<string> | undefined

/**
 * Why `password` is too weak for `name`, or undefined: at least MIN_PASSWORD_LENGTH characters, at
 * least 6 different ones, not containing the name. No composition rules (they push people to
 * predictable patterns); length is what resists guessing.
 */
export function passwordProblem(name: string, password: string): string | undefined {
  if ([...password].length < MIN_PASSWORD_LENGTH) return `a password has at least ${MIN_PASSWORD_LENGTH} characters`
  if (new Set(password).size < 6) return 'a password has at least 6 different characters'
  if (password.toLowerCase().includes(name.toLowerCase())) return 'a password does not contain the operator’s name'
  if ([...password].length > 256) return 'a password has at most 256 characters'
  return undefined
}

interface OperatorRow {
  id: string
  name: string
  role: OperatorRole
  password_hash: string | null
  disabled_at: Date | null
}

const toOperator = (r: OperatorRow): Operator => ({
  id: r.id,
  name: r.name,
  role: r.role,
  disabled: r.disabled_at !== null,
  hasPassword: r.password_hash !== null,
})

async function operatorRow(sql: Queryable, name: string): Promise<OperatorRow | undefined> {
  const [row] = await sql<OperatorRow[]>`
    select id::text, name, role, password_hash, disabled_at from operators where name = ${name}`
  return row
}

/** Every operator, by name. */
export async function listOperators(sql: Queryable): Promise<Operator[]> {
  const rows = await sql<OperatorRow[]>`
    select id::text, name, role, password_hash, disabled_at from operators order by name`
  return rows.map(toOperator)
}

/** An enabled operator by name, or undefined (the proxy's identity, the CLI's). */
export async function enabledOperator(sql: Queryable, name: string): Promise<Operator | undefined> {
  const row = await operatorRow(sql, name)
  return row && row.disabled_at === null ? toOperator(row) : undefined
}

function checkRole(role: string): OperatorRole {
  if (!(OPERATOR_ROLES as readonly string[]).includes(role))
    throw new OperatorInputError(`a role is one of ${OPERATOR_ROLES.join(', ')}`)
  return role as OperatorRole
}

/**
 * A new operator (as the schema owner). `password` undefined: proxy sign-in only.
 * @example await createOperator(ownerSql, { name: 'alice', role: 'approver', password })
 */
export async function createOperator(
  ownerSql: Queryable,
  o: { name: string; role: string; password?: string },
): Promise<Operator> {
  if (!OPERATOR_NAME_RE.test(o.name))
    throw new OperatorInputError('a name is 2 to 64 lower-case letters, digits and . _ @ -, starting with a letter')
  const role = checkRole(o.role)
  if (o.password !== undefined) {
    const weak = passwordProblem(o.name, o.password)
    if (weak) throw new OperatorInputError(weak)
  }
  const hash = o.password === undefined ? null : await hashPassword(o.password)
  const [row] = await ownerSql<OperatorRow[]>`
    insert into operators (name, role, password_hash, password_set_at)
    values (${o.name}, ${role}, ${hash}, ${hash === null ? null : new Date()})
    on conflict (name) do nothing
    returning id::text, name, role, password_hash, disabled_at`
  if (!row) throw new AppError({ code: 'OPERATOR_EXISTS', statusCode: 409, message: `operator ${o.name} exists` })
  return toOperator(row)
}

/** A new password for `name` (as the schema owner); the operator's sessions end. */
export async function setOperatorPassword(ownerSql: Queryable, name: string, password: string): Promise<Operator> {
  const weak = passwordProblem(name, password)
  if (weak) throw new OperatorInputError(weak)
  const hash = await hashPassword(password)
  return changeOperator(
    ownerSql,
    name,
    (tx) => tx`update operators set password_hash = ${hash}, password_set_at = now() where name = ${name}`,
  )
}

/** Another role for `name` (as the schema owner); the operator's sessions end. */
export async function setOperatorRole(ownerSql: Queryable, name: string, role: string): Promise<Operator> {
  const r = checkRole(role)
  return changeOperator(ownerSql, name, (tx) => tx`update operators set role = ${r} where name = ${name}`)
}

/** Disables (or enables again) `name` (as the schema owner); a disabled operator's sessions end at once. */
export async function setOperatorDisabled(ownerSql: Queryable, name: string, disabled: boolean): Promise<Operator> {
  return changeOperator(
    ownerSql,
    name,
    (tx) => tx`update operators set disabled_at = ${disabled ? new Date() : null} where name = ${name}`,
  )
}

async function changeOperator(
  sql: Queryable,
  name: string,
  change: (tx: Queryable) => Promise<unknown>,
): Promise<Operator> {
  // the change and the end of the operator's sessions together: a new password or a disabled account
  // never leaves an old session alive
  const run = async (tx: Queryable): Promise<Operator> => {
    const row = await operatorRow(tx, name)
    if (!row) throw new NotFoundError(`operator ${name}`)
    await change(tx)
    await tx`delete from operator_sessions where operator_id = ${row.id}`
    return toOperator((await operatorRow(tx, name)) as OperatorRow)
  }
  return 'begin' in sql ? ((await sql.begin(run)) as Operator) : run(sql)
}

/**
 * The operator `name` if `password` is theirs and they are enabled; else undefined. An unknown name
 * costs one hash too, so the time of the answer does not tell names apart.
 */
export async function checkOperatorPassword(
  sql: Queryable,
  name: string,
  password: string,
): Promise<Operator | undefined> {
  const row = OPERATOR_NAME_RE.test(name) ? await operatorRow(sql, name) : undefined
  if (!row?.password_hash) {
    decoy ??= hashPassword(randomBytes(24).toString('base64url'))
    await verifyPassword(password, await decoy)
    return undefined
  }
  const ok = await verifyPassword(password, row.password_hash)
  return ok && row.disabled_at === null ? toOperator(row) : undefined
}

const tokenHash = (token: string) => createHash('sha256').update(token).digest()

/** A session for `operatorId`: the token to hand out (never stored) and when it ends. */
export async function openSession(
  sql: Queryable,
  operatorId: string,
  ttlMs = SESSION_TTL_MS,
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url')
  const [row] = await sql<{ expires_at: Date }[]>`
    insert into operator_sessions (token_hash, operator_id, expires_at)
    values (${tokenHash(token)}, ${operatorId}, now() + make_interval(secs => ${ttlMs / 1000}))
    returning expires_at`
  return { token, expiresAt: (row as { expires_at: Date }).expires_at }
}

/** How often a listener forgets ended sessions at most (forgetEndedSessions, as operators sign in). */
export const FORGET_SESSIONS_EVERY_MS = 60_000

/**
 * Deletes the sessions that ended over a day ago (a few rows: sessions last SESSION_TTL_MS); how
 * many. The desk calls it as operators sign in, at most once per FORGET_SESSIONS_EVERY_MS, not on
 * every sign-in.
 */
export async function forgetEndedSessions(sql: Queryable): Promise<number> {
  const rows = await sql`delete from operator_sessions where expires_at < now() - interval '1 day'`
  return rows.count
}

/** The enabled operator a live session belongs to, or undefined. One index probe. */
export async function sessionOperator(sql: Queryable, token: string): Promise<Operator | undefined> {
  if (token.length < 16 || token.length > 128) return undefined
  const [row] = await sql<OperatorRow[]>`
    select o.id::text, o.name, o.role, o.password_hash, o.disabled_at
    from operator_sessions s join operators o on o.id = s.operator_id
    where s.token_hash = ${tokenHash(token)} and s.expires_at > now() and o.disabled_at is null`
  return row ? toOperator(row) : undefined
}

/** Ends a session (sign-out); nothing when it had ended already. */
export async function closeSession(sql: Queryable, token: string): Promise<void> {
  await sql`delete from operator_sessions where token_hash = ${tokenHash(token)}`
}
