/**
 * Fuzz every route of the published OpenAPI document: generated
 * bad bodies, queries, path parameters and headers, oversized bodies, wrong content types and
 * invalid JSON. Asserts zero 5xx, the one error shape with a stable code on every 4xx, and that
 * nothing was written: every table's rows (a digest, so updates count too), and no Redis write
 * from the API's connection (MONITOR) nor a key or job under this file's own namespaces.
 *
 * Seeded (mulberry32 from @wh/testkit): FUZZ_SEED=<n> reproduces a run, FUZZ_CASES=<n> sets the
 * cases per route. A failure prints the route, the case label and its index.
 *
 * Not fuzzed: the WebSocket routes (/ws/prices, /ws/strategies). They appear in the document as
 * GET, but a plain GET (no upgrade) never reaches their handlers; their message handling is
 * covered by ws-prices.test.ts and ws-strategies.test.ts.
 */
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import { ManualClock } from '@wh/core'
import { QUEUES } from '@wh/jobs'
import { marketNames } from '@wh/market'
import { integrationContext, prng } from '@wh/testkit'
import { signalSignature } from '@wh/trading'
import { buildChainRegistry, DepositKeyring } from '@wh/wallet'
import { Queue } from 'bullmq'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BODY_LIMIT_BYTES, buildServer } from '../src/server'
import { newAccount, seedFeedPrice, signIn } from './support'

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed_f022)
const CASES_PER_ROUTE = Number(process.env.FUZZ_CASES ?? 400)
const IN_FLIGHT = 8
const WS_PATHS = new Set(['/ws/prices', '/ws/strategies'])
const ERROR_CODE_RE = /^[A-Z][A-Z0-9_]*$/

// ---------------------------------------------------------------------------------------------
// the server, under a Redis namespace of this file's own (BullMQ prefix, market-data names)

interface Fuzzed {
  app: FastifyInstance
  ctx: Awaited<ReturnType<typeof integrationContext>>
  clock: ManualClock
  redis: Redis
  queues: Queue[]
  namespaces: string[]
  close(): Promise<void>
}

async function startFuzzedApi(): Promise<Fuzzed> {
  const ctx = await integrationContext({ AUTH_RATE_LIMIT_PER_MINUTE: '1000000', SIWE_DOMAIN: 'app.example.test' })
  const clock = new ManualClock(Date.now())
  const tag = randomUUID().slice(0, 8)
  const bullPrefix = `wh-fuzz-${tag}`
  const names = marketNames(`fz-${tag}:`)
  const redis = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: 1 })
  const queueConnection = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: null })
  const queues = Object.values(QUEUES).map((n) => new Queue(n, { connection: queueConnection, prefix: bullPrefix }))
  const app = await buildServer({
    config: ctx.config,
    database: ctx.database,
    redis,
    keyring: DepositKeyring.fromMnemonic(ctx.config.keys.masterMnemonic).publicOnly(),
    chains: buildChainRegistry(ctx.config),
    queues,
    bullPrefix,
    clock,
    marketData: { names },
    logger: process.env.TEST_LOG ? { level: 'error' } : false,
  })
  await app.ready()
  // the bounds of an ETH withdrawal need a recent price, as the worker's feed keeps one
  await seedFeedPrice(redis, names, 'ETH', '3000', clock.now().getTime())
  return {
    app,
    ctx,
    clock,
    redis,
    queues,
    namespaces: [`${bullPrefix}:`, `fz-${tag}:`],
    async close() {
      await app.close()
      await Promise.all(queues.map((q) => q.close()))
      queueConnection.disconnect()
      redis.disconnect()
      await ctx.database.close()
    },
  }
}

// ---------------------------------------------------------------------------------------------
// OpenAPI, as much of it as the generator reads

interface Schema {
  type?: string
  enum?: unknown[]
  anyOf?: Schema[]
  pattern?: string
  format?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  properties?: Record<string, Schema>
  required?: string[]
}
interface Parameter {
  in: 'path' | 'query' | 'header'
  name: string
  schema: Schema
}
interface Operation {
  method: string
  path: string
  parameters: Parameter[]
  body?: Schema
  secured: boolean
}

function operationsOf(doc: {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: unknown; security?: unknown[] }>>
}): Operation[] {
  const ops: Operation[] = []
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content
      ops.push({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        ...(content?.['application/json'] && { body: content['application/json'].schema }),
        secured: (op.security ?? []).some((s) => Object.hasOwn(s as object, 'bearerAuth')),
      })
    }
  }
  return ops
}

const enumsOf = (s: Schema): unknown[] => s.enum ?? (s.anyOf ?? []).flatMap(enumsOf)

// ---------------------------------------------------------------------------------------------
// the generator

type Rng = () => number
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T
const chance = (rng: Rng, p: number) => rng() < p

function nested(depth: number, leaf: unknown = 1, asArray = false): unknown {
  let v: unknown = leaf
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v }
  return v
}

const HUGE = 'A'.repeat(100_000)
const LONG = 'x'.repeat(5_000)

/** Values of the wrong type or shape for any field. */
const badValues = (rng: Rng): unknown => {
  const pool: Array<() => unknown> = [
    () => null,
    () => true,
    () => false,
    () => 0,
    () => -1,
    () => 1.5,
    () => 1e308,
    () => -1e308,
    () => 2 ** 64,
    () => Number.MAX_SAFE_INTEGER + 2,
    () => '',
    () => ' ',
    () => LONG,
    () => '\u0000',
    () => '\ud800',
    () => '💥🔥'.repeat(50),
    () => '‮evil',
    () => '../../../../etc/passwd',
    () => "' OR 1=1 --",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a deliberate log-injection probe
    () => '${jndi:ldap://x}',
    () => '<script>alert(1)</script>',
    () => [],
    () => [1, 'a', null],
    () => ({}),
    () => ({ $gt: '' }),
    () => ({ __proto__: { admin: true } }),
    () => JSON.parse('{"__proto__":{"polluted":1}}'),
    () => nested(1_000),
    () => nested(2_000, 'x', true),
    () => Array.from({ length: 5_000 }, (_, i) => i),
  ]
  return pick(rng, pool)()
}

/** Decimal strings (and look-alikes) for an amount field. */
const AMOUNTS: readonly unknown[] = [
  '-1',
  '-0.000001',
  '-0',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e18',
  '1E-6',
  '0x10',
  '1.0000000000000000001',
  '0.0000001',
  '9'.repeat(41),
  '9'.repeat(40),
  `${'9'.repeat(40)}.${'9'.repeat(18)}`,
  '0',
  '0.0',
  '00001',
  ' 1',
  '1 ',
  '1,5',
  '١٢٣',
  '１２３',
  '1.',
  '.5',
  '+1',
  '',
  '1e400',
  1e21,
  -5,
  0.1,
  10,
  Number.NaN,
  '10',
  '1000000',
]

/** A plausible value for a field, so a mutation elsewhere is what the server must reject. */
function sampleFor(name: string, s: Schema): unknown {
  const e = enumsOf(s)
  if (e.length > 0) return e[0]
  if (name === 'amount') return '10'
  if (name === 'destination') return '0x000000000000000000000000000000000000dEaD'
  if (name === 'signature') return `0x${'ab'.repeat(65)}`
  if (name === 'message') return 'app.example.test wants you to sign in'
  if (name === 'id') return `sig-${randomUUID()}`
  if (s.type === 'integer' || s.type === 'number') return s.minimum ?? 1
  return 'fuzz'
}

function baseBody(schema: Schema): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const [name, s] of Object.entries(schema.properties ?? {})) body[name] = sampleFor(name, s)
  return body
}

interface Case {
  label: string
  inject: InjectOptions
  /** statuses this case must answer with (besides: never 5xx, the error shape on 4xx) */
  expect?: number[]
}

/** A JSON body that is surely invalid for `schema` (even with Ajv's type coercion). */
function invalidBody(rng: Rng, schema: Schema): { label: string; body: unknown } {
  const props = Object.keys(schema.properties ?? {})
  const required = schema.required ?? []
  const body = baseBody(schema)
  const kind = Math.floor(rng() * 9)
  // a body whose fields are all optional (PATCH /wheels/{id}) cannot miss one: an extra field instead
  switch (required.length === 0 && (kind === 0 || kind === 5) ? 2 : kind) {
    case 0: {
      const f = pick(rng, required)
      delete body[f]
      return { label: `missing ${f}`, body }
    }
    case 1: {
      const f = pick(rng, props)
      // objects, arrays of several items and deep nesting never coerce to a scalar
      body[f] = pick(rng, [{}, { a: 1 }, [1, 2], nested(500), nested(500, 'x', true), [[]]])
      return { label: `${f} is a structure`, body }
    }
    case 2: {
      body[`extra_${Math.floor(rng() * 1e6)}`] = badValues(rng)
      return { label: 'extra field', body }
    }
    case 3: {
      const enumFields = props.filter((p) => enumsOf(schema.properties?.[p] ?? {}).length > 0)
      const f = pick(rng, enumFields.length > 0 ? enumFields : props)
      body[f] = pick(rng, ['', 'nope', 'eth', 'ETH ', '💥', LONG, 42, true])
      return { label: `${f} out of its enum`, body }
    }
    case 4:
      return {
        label: 'not an object',
        body: pick(rng, [[], [body], 'a string', 42, true, null, nested(3_000, body, true)]),
      }
    case 5: {
      const f = pick(rng, props)
      body[f] = HUGE.slice(0, 20_000)
      delete body[pick(rng, required)]
      return { label: `${f} huge, a required field missing`, body }
    }
    case 6: {
      const f = pick(rng, props)
      body[f] = badValues(rng)
      // biome-ignore lint/suspicious/noProto: a deliberate prototype-pollution probe
      body.__proto__ = { x: 1 }
      body[`zz_${f}`] = 1
      return { label: `${f} bad and an extra field`, body }
    }
    case 7: {
      const f = pick(rng, required)
      body[f] = null
      body[`zz_${f}`] = [1, 2]
      return { label: `${f} null and an extra field`, body }
    }
    default: {
      // a number where a string is expected (coerced to a string by Ajv), plus something surely bad
      const f = pick(rng, props)
      body[f] = pick(rng, [1, -1, 1.5e300, 0])
      body.unexpected = { nested: [1, 2, 3] }
      return { label: `${f} a number and an extra field`, body }
    }
  }
}

/** A JSON body mutated one way or another: may still be valid (then business rules answer). */
function mutatedBody(rng: Rng, schema: Schema): { label: string; body: unknown } {
  const props = Object.keys(schema.properties ?? {})
  const body = baseBody(schema)
  if (props.includes('amount') && chance(rng, 0.5)) {
    body.amount = pick(rng, AMOUNTS)
    return { label: `amount ${JSON.stringify(body.amount)?.slice(0, 60)}`, body }
  }
  const f = pick(rng, props)
  body[f] = badValues(rng)
  return { label: `${f} = ${JSON.stringify(body[f])?.slice(0, 60)}`, body }
}

const RAW_BODIES: readonly string[] = [
  '{',
  '}',
  '{"a":}',
  '{"amount": NaN}',
  '{"amount": Infinity}',
  "{'a': 1}",
  '{"a":1,}',
  '[1,2,',
  'null',
  '""',
  '0',
  'NaN',
  '\u0000',
  '\ufeff{}',
  '{"a":"\\ud800"}',
  '{"a":"\\u00"}',
  '{"a":1}garbage',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
  '\xff\xfe\xfd',
]

/** Values for a path parameter: never a valid one for its format. */
const BAD_PATH_PARAMS: readonly string[] = [
  'abc',
  '1',
  '-1',
  '0',
  'null',
  'undefined',
  encodeURIComponent('ü💥'),
  encodeURIComponent('‮'),
  'a'.repeat(5_000),
  '..',
  '../',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e',
  '%00',
  '%',
  '%E0%A4%A',
  '%20',
  encodeURIComponent("' OR 1=1 --"),
  '00000000-0000-0000-0000-00000000000G',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '{id}',
  ':id',
  'eth',
  'ETH%00',
]

/** Values for a query parameter, picked by what its schema is. */
function badQueryValue(rng: Rng, s: Schema): string {
  const generic = ['', 'abc', '-1', '💥', LONG.slice(0, 2_000), '%00', 'null', '[]', '{}', '1e3', 'true']
  if (s.type === 'integer' || s.type === 'number')
    return pick(rng, [
      ...generic,
      '0',
      String((s.minimum ?? 0) - 1),
      String((s.maximum ?? 100) + 1),
      '1.5',
      '9'.repeat(30),
      '-0',
      'NaN',
      'Infinity',
      '0x10',
      ' 5',
      '1e2',
      '5abc',
    ])
  if (s.format === 'date-time')
    return pick(rng, [
      ...generic,
      '0000-01-01T00:00:00Z',
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
      '2024-06-30T23:59:60Z',
      '2024-02-30T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01',
      '2024-01-01T00:00:00',
      '2024-01-01T00:00:00+99:99',
      '1970-01-01T00:00:00.0000000001Z',
      '+275760-09-13T00:00:00Z',
      '-000001-01-01T00:00:00Z',
      new Date(0).toISOString(),
      new Date().toISOString(),
    ])
  if (enumsOf(s).length > 0) return pick(rng, [...generic, 'XML', 'Json', `${enumsOf(s)[0]} `, 'after_cycle,now'])
  return pick(rng, generic)
}

/** Cursors: garbage, and forged ones in the shapes the API issues (base64url of "time|uuid"). */
function badCursor(rng: Rng): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64url')
  const uuid = randomUUID()
  return pick(rng, [
    'abc',
    '',
    '!!!',
    '%00',
    'a'.repeat(199),
    'a'.repeat(400),
    b64('garbage'),
    b64('|'),
    b64(`2024-01-01 00:00:00+00|${uuid}|x`),
    b64(`9999-99-99 99:99:99+00|${uuid}`),
    b64(`2024-02-30 00:00:00+00|${uuid}`),
    b64(`0000-01-01 00:00:00+00|${uuid}`),
    b64(`2024-01-01 00:00:00.123456+99|${uuid}`),
    b64(`2024-01-01 24:00:00+00|${uuid}`),
    b64(`2024-01-01 00:00:00+00|${uuid.toUpperCase()}`),
    b64(`2024-01-01 00:00:00+00|ffffffff-ffff-ffff-ffff-ffffffffffff`),
    b64(`2024-01-01T00:00:00.000Z|${uuid}`),
    b64(`0000-01-01T00:00:00.000Z|${uuid}`),
    b64(`+275760-09-13T00:00:00.000Z|${uuid}`),
    b64(`-000001-01-01T00:00:00.000Z|${uuid}`),
    b64(`1970-01-01T00:00:00.000Z|not-a-uuid`),
    b64(`${'9'.repeat(50)}|${uuid}`),
  ])
}

const encodeQuery = (q: Array<[string, string]>) =>
  q.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')

interface RouteContext {
  token: string
  webhookSecret: string
  nowSec: () => string
}

function urlOf(op: Operation, pathValues: Record<string, string>, query: Array<[string, string]>): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => pathValues[name] ?? 'x')
  return query.length > 0 ? `${path}?${encodeQuery(query)}` : path
}

function validPathValues(op: Operation): Record<string, string> {
  const values: Record<string, string> = {}
  for (const p of op.parameters.filter((x) => x.in === 'path')) {
    const e = enumsOf(p.schema)
    values[p.name] = e.length > 0 ? String(e[0]) : p.schema.format === 'uuid' ? randomUUID() : 'ETH'
  }
  return values
}

/** The cases of one route: the same every run for the same seed. */
function casesFor(op: Operation, rc: RouteContext, rng: Rng, count: number): Case[] {
  const isSignals = op.path === '/webhooks/signals'
  const isVerify = op.path === '/auth/verify'
  const pathParams = op.parameters.filter((p) => p.in === 'path')
  const queryParams = op.parameters.filter((p) => p.in === 'query')
  const headerParams = op.parameters.filter((p) => p.in === 'header')
  const hasBody = op.body !== undefined
  const bodyLimit = isSignals ? 16 * 1024 : BODY_LIMIT_BYTES

  function headersFor(raw: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = {}
    if (op.secured) h.authorization = `Bearer ${rc.token}`
    for (const p of headerParams) {
      if (p.name === 'idempotency-key') h[p.name] = `fuzz-${Math.floor(rng() * 1e9)}`
    }
    if (isSignals) {
      const ts = rc.nowSec()
      h['x-signal-timestamp'] = ts
      h['x-signal-signature'] = signalSignature(rc.webhookSecret, ts, raw ?? '')
    }
    return { ...h, ...extra }
  }
  const jsonCase = (label: string, body: unknown, o: { expect?: number[]; query?: Array<[string, string]> } = {}) => {
    const raw = JSON.stringify(body) ?? 'null'
    return {
      label,
      inject: {
        method: op.method as InjectOptions['method'],
        url: urlOf(op, validPathValues(op), o.query ?? []),
        headers: headersFor(raw, { 'content-type': 'application/json' }),
        payload: raw,
      },
      ...(o.expect && { expect: o.expect }),
    } satisfies Case
  }
  /**
   * The body of a case that fuzzes something else (path, query, headers): a plausible one; for the
   * webhook a surely invalid one, since a signed valid signal would be recorded.
   */
  const auxBody = (): string | undefined => {
    if (!op.body) return undefined
    return JSON.stringify(isSignals ? invalidBody(rng, op.body).body : baseBody(op.body))
  }
  // /auth/verify answers every failure, Fastify's own body errors included, with 401 SIWE_REJECTED
  const orVerify = (statuses: number[]) => (isVerify ? [401] : statuses)

  const generators: Array<[weight: number, make: () => Case]> = []
  if (hasBody && op.body) {
    const schema = op.body
    generators.push([
      6,
      () => {
        const { label, body } = invalidBody(rng, schema)
        // a huge field may take the body over the webhook's smaller limit: 413
        return jsonCase(`invalid body: ${label}`, body, { expect: orVerify(isSignals ? [400, 413] : [400]) })
      },
    ])
    // a signed webhook with a still-valid body would be recorded: the webhook gets invalid bodies only
    if (!isSignals)
      generators.push([
        4,
        () => {
          const { label, body } = mutatedBody(rng, schema)
          return jsonCase(`mutated body: ${label}`, body)
        },
      ])
    generators.push([
      2,
      () => {
        const raw = pick(rng, RAW_BODIES)
        return {
          label: `invalid JSON: ${JSON.stringify(raw.slice(0, 40))}`,
          inject: {
            method: op.method as InjectOptions['method'],
            url: urlOf(op, validPathValues(op), []),
            headers: headersFor(raw, { 'content-type': 'application/json' }),
            payload: raw,
          },
        }
      },
    ])
    generators.push([
      1,
      () => {
        const size = pick(rng, [bodyLimit + 1, bodyLimit * 2, 1024 * 1024])
        const raw = JSON.stringify({ ...baseBody(schema), pad: 'p'.repeat(size) })
        return {
          label: `oversized body (${raw.length} bytes)`,
          inject: {
            method: op.method as InjectOptions['method'],
            url: urlOf(op, validPathValues(op), []),
            headers: headersFor(raw, { 'content-type': 'application/json' }),
            payload: raw,
          },
          expect: orVerify([413]),
        }
      },
    ])
    generators.push([
      2,
      () => {
        const [ct, payload] = pick(rng, [
          ['text/plain', JSON.stringify(baseBody(schema))],
          [
            'multipart/form-data; boundary=xyz',
            '--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--xyz--\r\n',
          ],
          ['application/x-www-form-urlencoded', 'amount=10&asset=ETH'],
          ['application/xml', '<a>1</a>'],
          ['application/jsonx', '{}'],
          ['image/png', '\x89PNG'],
          ['', JSON.stringify(baseBody(schema))],
        ] as const)
        const headers = headersFor(payload, ct ? { 'content-type': ct } : {})
        if (!ct) delete headers['content-type']
        return {
          label: `content type ${JSON.stringify(ct)}`,
          inject: {
            method: op.method as InjectOptions['method'],
            url: urlOf(op, validPathValues(op), []),
            headers,
            payload,
          },
          // Fastify parses text/plain itself: a string body then fails the schema (400)
          // the webhook keeps the raw bytes of JSON only, so any other body fails its MAC first (401)
          ...(ct && { expect: orVerify(ct === 'text/plain' ? [400, 415, ...(isSignals ? [401] : [])] : [415]) }),
        }
      },
    ])
    generators.push([
      1,
      () => ({
        label: 'JSON content type, empty body',
        inject: {
          method: op.method as InjectOptions['method'],
          url: urlOf(op, validPathValues(op), []),
          headers: headersFor('', { 'content-type': 'application/json' }),
          payload: '',
        },
        expect: orVerify([400]),
      }),
    ])
  } else {
    // a body where none is expected: ignored or refused, never a 5xx
    generators.push([
      1,
      () => {
        const [ct, payload] = pick(rng, [
          ['application/json', '{"a":'],
          ['application/json', JSON.stringify(nested(2_000))],
          ['application/json', 'p'.repeat(BODY_LIMIT_BYTES + 10)],
          ['text/plain', 'hello'],
          ['multipart/form-data; boundary=xyz', '--xyz--'],
        ] as const)
        return {
          label: `unexpected body (${ct}, ${payload.length} bytes)`,
          inject: {
            method: op.method as InjectOptions['method'],
            url: urlOf(op, validPathValues(op), []),
            headers: headersFor(payload, { 'content-type': ct }),
            payload,
          },
        }
      },
    ])
  }
  if (pathParams.length > 0)
    generators.push([
      4,
      () => {
        const values = validPathValues(op)
        const p = pick(rng, pathParams)
        values[p.name] = pick(rng, BAD_PATH_PARAMS)
        const body = auxBody()
        return {
          label: `path ${p.name}=${values[p.name]?.slice(0, 40)}`,
          inject: {
            method: op.method as InjectOptions['method'],
            url: urlOf(op, values, []),
            headers: headersFor(body, body ? { 'content-type': 'application/json' } : {}),
            ...(body && { payload: body }),
          },
        }
      },
    ])
  // queries: every route takes unknown keys and wrong types; routes with a query get more
  generators.push([
    queryParams.length > 0 ? 5 : 1,
    () => {
      const q: Array<[string, string]> = []
      for (const p of queryParams) {
        if (chance(rng, 0.5)) continue
        if (p.name === 'cursor') q.push([p.name, badCursor(rng)])
        else q.push([p.name, badQueryValue(rng, p.schema)])
        // repeated keys arrive as arrays
        if (chance(rng, 0.1)) q.push([p.name, badQueryValue(rng, p.schema)])
      }
      if (q.length === 0 || chance(rng, 0.3))
        q.push([pick(rng, ['unknown', 'limit[]', '__proto__', 'constructor', 'a.b', 'x'.repeat(300)]), 'v'])
      const body = auxBody()
      return {
        label: `query ${encodeQuery(q).slice(0, 120)}`,
        inject: {
          method: op.method as InjectOptions['method'],
          url: urlOf(op, validPathValues(op), q),
          headers: headersFor(body, body ? { 'content-type': 'application/json' } : {}),
          ...(body && { payload: body }),
        },
      }
    },
  ])
  if (headerParams.length > 0 || isSignals)
    generators.push([
      3,
      () => {
        const body = auxBody()
        const headers = headersFor(body, body ? { 'content-type': 'application/json' } : {})
        const names = [...headerParams.map((p) => p.name)]
        const name = pick(rng, names)
        const value = pick(rng, [
          '',
          ' ',
          'a'.repeat(129),
          'a'.repeat(8_000),
          'ü',
          'sha256=',
          `sha256=${'0'.repeat(64)}`,
          `sha256=${'A'.repeat(64)}`,
          '-1',
          '1e10',
          '99999999999999999999',
          '1.5',
          'NaN',
          '0x10',
          rc.nowSec(),
          'a\tb',
        ])
        if (value === 'ü' || value === '') delete headers[name]
        else headers[name] = value
        return {
          label: `header ${name}=${JSON.stringify(value.slice(0, 40))}`,
          inject: {
            method: op.method as InjectOptions['method'],
            url: urlOf(op, validPathValues(op), []),
            headers,
            ...(body && { payload: body }),
          },
        }
      },
    ])
  if (op.secured)
    generators.push([
      1,
      () => {
        const authorization = pick(rng, [
          'Bearer',
          'Bearer ',
          `Bearer ${rc.token}x`,
          `Bearer ${rc.token.split('.').slice(0, 2).join('.')}.`,
          `Basic ${Buffer.from('admin:admin').toString('base64')}`,
          `bearer ${'a'.repeat(5_000)}`,
          `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`,
        ])
        const body = auxBody()
        return {
          label: `authorization ${authorization.slice(0, 30)}`,
          inject: {
            method: op.method as InjectOptions['method'],
            url: urlOf(op, validPathValues(op), []),
            headers: headersFor(body, { authorization, ...(body && { 'content-type': 'application/json' }) }),
            ...(body && { payload: body }),
          },
          expect: [401],
        }
      },
    ])

  const total = generators.reduce((s, [w]) => s + w, 0)
  const cases: Case[] = []
  for (let i = 0; i < count; i++) {
    let r = rng() * total
    let make = (generators[0] as [number, () => Case])[1]
    for (const [weight, generate] of generators) {
      make = generate
      r -= weight
      if (r < 0) break
    }
    cases.push(make())
  }
  return cases
}

// ---------------------------------------------------------------------------------------------
// what must not change

const READ_COMMANDS = new Set([
  'ping',
  'get',
  'mget',
  'hget',
  'hgetall',
  'hmget',
  'exists',
  'llen',
  'zcard',
  'scard',
  'lrange',
  'zrange',
  'zrangebyscore',
  'smembers',
  'type',
  'ttl',
  'pttl',
  'info',
  'client',
  'select',
  'subscribe',
  'psubscribe',
  'unsubscribe',
  'punsubscribe',
  'monitor',
  'keys',
  'scan',
])

async function tableDigests(sql: Fuzzed['ctx']['database']['sql']): Promise<Record<string, string>> {
  const tables = await sql<{ name: string }[]>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' and table_name <> '__drizzle_migrations'
    order by table_name`
  const out: Record<string, string> = {}
  for (const { name } of tables) {
    // nonces are issued by GET /auth/nonce by design: those rows are counted apart, used ones digested
    const where = name === 'siwe_nonces' ? sql`where used_at is not null` : sql``
    const [row] = await sql<{ n: string; digest: string | null }[]>`
      select count(*)::text as n, md5(string_agg(t::text, E'\n' order by t::text)) as digest
      from ${sql(name)} t ${where}`
    out[name] = `${row?.n} rows, ${row?.digest ?? 'empty'}`
  }
  return out
}

async function namespaceKeys(redis: Redis, namespaces: string[]): Promise<string[]> {
  const keys: string[] = []
  for (const ns of namespaces) keys.push(...(await redis.keys(`${ns.replace(/[*?[\]]/g, '\\$&')}*`)))
  return keys.sort()
}

// ---------------------------------------------------------------------------------------------

describe('fuzzing every route of the OpenAPI document', () => {
  let api: Fuzzed
  let token: string
  let ops: Operation[]
  let monitor: Awaited<ReturnType<Redis['monitor']>>
  const redisWrites: string[] = []
  let redisCommandsSeen = 0

  beforeAll(async () => {
    api = await startFuzzedApi()
    token = await signIn(api.app, newAccount())
    const doc = await api.app.inject({ method: 'GET', url: '/docs/json' })
    expect(doc.statusCode).toBe(200)
    ops = operationsOf(doc.json())
  })
  afterAll(async () => {
    monitor?.disconnect()
    await api?.close()
  })

  it('the document lists the routes of spec 4 (so the fuzz covers them)', () => {
    const listed = new Set(ops.map((o) => `${o.method} ${o.path}`))
    for (const r of [
      'GET /auth/nonce',
      'POST /auth/verify',
      'GET /deposit-address',
      'POST /withdrawals',
      'GET /withdrawals',
      'GET /withdrawals/routes',
      'POST /positions',
      'GET /positions',
      'DELETE /positions/{id}',
      'POST /subaccounts/{asset}/release',
      'GET /portfolio/summary',
      'GET /portfolio/statement',
      'POST /webhooks/signals',
      'GET /signals/state',
      'GET /trading-config',
      'GET /health',
      'GET /assets',
      'GET /{asset}/chart',
      'GET /{asset}/fees',
      'GET /{asset}/strategies',
    ])
      expect(listed.has(r), r).toBe(true)
  })

  it("the router's own refusals answer the one error shape (regression: Fastify's FST_ codes leaked)", async () => {
    const cases: Array<[string, number, string]> = [
      [`/positions/${'a'.repeat(5_000)}`, 414, 'URI_TOO_LONG'],
      ['/positions/%E0%A4%A', 400, 'BAD_REQUEST'],
      ['/positions/%', 400, 'BAD_REQUEST'],
    ]
    for (const [url, status, code] of cases) {
      const res = await api.app.inject({ method: 'DELETE', url, headers: { authorization: `Bearer ${token}` } })
      expect(res.statusCode, url).toBe(status)
      expect(res.json(), url).toEqual({
        statusCode: status,
        code,
        error: STATUS_CODES[status],
        message: expect.any(String),
      })
    }
  })

  it('regressions the fuzz found answer 400, not 500', async () => {
    const b64 = (t: string) => Buffer.from(t).toString('base64url')
    const id = randomUUID()
    const urls = [
      // Ajv coerces "Infinity" to a number its integer check passes; the query then failed in Postgres
      '/withdrawals?limit=Infinity',
      '/positions?limit=Infinity',
      // cursors of the issued shape with fields out of range: the query failed in Postgres
      ...[
        '9999-99-99 99:99:99+00',
        '2024-02-30 00:00:00+00',
        '0000-01-01 00:00:00+00',
        '2024-01-01 00:00:00+99',
      ].flatMap((t) => [`/withdrawals?cursor=${b64(`${t}|${id}`)}`, `/positions?cursor=${b64(`${t}|${id}`)}`]),
      // the default start (to - 30 days) fell into year 0
      '/portfolio/summary?to=0001-01-01T00:00:00Z',
      '/ETH/chart?to=0001-01-01T00:00:00Z',
      '/ETH/chart?from=0001-01-01T00:00:00%2B01:00&to=0001-01-02T00:00:00Z',
    ]
    for (const url of urls) {
      const res = await api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })
      expect(res.statusCode, url).toBe(400)
      expect(res.json().code, url).toMatch(/^(VALIDATION_ERROR|INVALID_CURSOR|INVALID_PERIOD|INVALID_CHART_RANGE)$/)
    }
    // early in year 1 the default start is clamped to year 1, not refused
    const early = await api.app.inject({
      method: 'GET',
      url: '/portfolio/summary?to=0001-01-02T00:00:00Z',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(early.statusCode).toBe(200)
    // a valid cursor still pages
    const ok = await api.app.inject({
      method: 'GET',
      url: `/withdrawals?cursor=${b64(`2024-01-01 00:00:00.123456+00|${id}`)}`,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(ok.statusCode).toBe(200)
  })

  it('bad input never answers 5xx, always the one error shape, and writes nothing', async () => {
    const started = Date.now()
    const sql = api.ctx.database.sql
    const rc: RouteContext = {
      token,
      webhookSecret: api.ctx.config.webhookSecret,
      nowSec: () => String(Math.floor(api.clock.now().getTime() / 1000)),
    }

    // Redis: every command the API's own connection sends while fuzzing
    const clientPort = (api.redis as unknown as { stream: { localPort: number } }).stream.localPort
    monitor = await new Redis(api.ctx.config.cacheUrl).monitor()
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (!source.endsWith(`:${clientPort}`)) return
      redisCommandsSeen++
      if (!READ_COMMANDS.has(String(args[0]).toLowerCase())) redisWrites.push(args.join(' ').slice(0, 200))
    })

    // the deposit address is recorded the first time it is shown (for the deposit watch): shown once
    // here, so a fuzzed request that the route serves anyway (an unknown query field) writes nothing
    const shown = await api.app.inject({
      method: 'GET',
      url: '/deposit-address',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(shown.statusCode).toBe(200)
    const tablesBefore = await tableDigests(sql)
    const [noncesBefore] = await sql<{ n: number }[]>`select count(*)::int as n from siwe_nonces`
    const keysBefore = await namespaceKeys(api.redis, api.namespaces)

    const failures: string[] = []
    const codes = new Map<string, Set<string>>()
    let noncesIssued = 0
    let total = 0
    const fuzzed = ops.filter((o) => !WS_PATHS.has(o.path))
    for (const [routeIndex, op] of fuzzed.entries()) {
      const route = `${op.method} ${op.path}`
      const rng = prng(SEED + routeIndex * 7919)
      const cases = casesFor(op, rc, rng, CASES_PER_ROUTE)
      total += cases.length
      for (let i = 0; i < cases.length; i += IN_FLIGHT) {
        const batch = cases.slice(i, i + IN_FLIGHT)
        const answers = await Promise.all(batch.map((c) => api.app.inject(c.inject)))
        answers.forEach((res, j) => {
          const c = batch[j] as Case
          const where = `${route} case #${i + j} (${c.label}) seed ${SEED}`
          if (op.path === '/auth/nonce' && res.statusCode === 200) noncesIssued++
          if (process.env.FUZZ_VERBOSE && res.statusCode < 300 && op.method !== 'GET')
            console.log(`${where}: ${res.statusCode} ${String(c.inject.payload).slice(0, 300)}`)
          if (res.statusCode >= 500) {
            failures.push(`${where}: ${res.statusCode} ${res.body.slice(0, 300)}`)
            return
          }
          if (c.expect && !c.expect.includes(res.statusCode))
            failures.push(`${where}: ${res.statusCode}, expected ${c.expect.join('|')}: ${res.body.slice(0, 200)}`)
          if (res.statusCode < 400) return
          let body: Record<string, unknown>
          try {
            body = res.json()
          } catch {
            failures.push(`${where}: ${res.statusCode} body is not JSON: ${res.body.slice(0, 200)}`)
            return
          }
          const keys = Object.keys(body).sort().join(',')
          const details = body.details as Record<string, unknown> | undefined
          const shapeOk =
            (keys === 'code,error,message,statusCode' ||
              (keys === 'code,details,error,message,statusCode' &&
                typeof details === 'object' &&
                details !== null &&
                Object.values(details).every(
                  (v) => v === null || ['string', 'number', 'boolean'].includes(typeof v),
                ))) &&
            body.statusCode === res.statusCode &&
            body.error === STATUS_CODES[res.statusCode] &&
            typeof body.message === 'string' &&
            typeof body.code === 'string' &&
            ERROR_CODE_RE.test(body.code) &&
            !body.code.startsWith('FST_')
          if (!shapeOk) failures.push(`${where}: not the one error shape: ${res.body.slice(0, 200)}`)
          if (op.secured && res.statusCode === 401 && body.code !== 'UNAUTHORIZED')
            failures.push(`${where}: 401 with code ${String(body.code)}`)
          if (op.path === '/auth/verify' && body.code !== 'SIWE_REJECTED')
            failures.push(`${where}: /auth/verify answered ${String(body.code)}`)
          const key = `${route} ${res.statusCode}`
          if (!codes.has(key)) codes.set(key, new Set())
          codes.get(key)?.add(String(body.code))
        })
      }
    }

    // a code is stable: the same request answers the same status and code again
    const replayRng = prng(SEED ^ 0xabcdef)
    for (const [routeIndex, op] of fuzzed.entries()) {
      const rng = prng(SEED + routeIndex * 7919)
      const cases = casesFor(op, rc, rng, CASES_PER_ROUTE).filter((c) => !c.inject.headers?.['x-signal-signature'])
      for (let k = 0; k < 5 && cases.length > 0; k++) {
        const c = pick(replayRng, cases)
        const [a, b] = [await api.app.inject(c.inject), await api.app.inject(c.inject)]
        if (op.path === '/auth/nonce') noncesIssued += [a, b].filter((r) => r.statusCode === 200).length
        const codeOf = (r: typeof a) => (r.statusCode >= 400 ? r.json().code : 'ok')
        if (a.statusCode !== b.statusCode || codeOf(a) !== codeOf(b))
          failures.push(
            `${op.method} ${op.path} (${c.label}): ${a.statusCode}/${codeOf(a)} then ${b.statusCode}/${codeOf(b)}`,
          )
      }
    }

    const tablesAfter = await tableDigests(sql)
    const [noncesAfter] = await sql<{ n: number }[]>`select count(*)::int as n from siwe_nonces`
    const keysAfter = await namespaceKeys(api.redis, api.namespaces)
    const jobs = await Promise.all(api.queues.map((q) => q.getJobCounts()))
    // MONITOR lines arrive a moment after the reply: one round trip on the monitored path flushes them
    await api.redis.ping()
    await new Promise((r) => setImmediate(r))

    const elapsedMs = Date.now() - started
    if (process.env.FUZZ_VERBOSE)
      console.log(
        `fuzzed ${fuzzed.length} routes, ${total} cases in ${elapsedMs} ms\n`,
        [...codes].map(([k, v]) => `${k}: ${[...v].join(', ')}`).join('\n'),
      )
    expect(failures.slice(0, 30)).toEqual([])
    expect(tablesAfter).toEqual(tablesBefore)
    expect((noncesAfter?.n ?? 0) - (noncesBefore?.n ?? 0)).toBe(noncesIssued)
    expect(redisCommandsSeen, 'MONITOR saw the API connection (health probes, market reads)').toBeGreaterThan(0)
    expect(redisWrites.slice(0, 20)).toEqual([])
    expect(keysAfter).toEqual(keysBefore)
    for (const counts of jobs) expect(Object.values(counts).every((n) => n === 0)).toBe(true)
    expect(total).toBeGreaterThanOrEqual(fuzzed.length * CASES_PER_ROUTE)
    expect(elapsedMs).toBeLessThan(60_000)
  }, 120_000)
})
