/**
 * Writes TypeScript types for the v3 methods the client uses from the published OpenAPI document
 * (packages/exchange/test/spec/v3/openapi.json; docs/exchange-v3.md "Sources read"). Only the
 * schemas those methods reach are emitted, so the generated file stays reviewable. The JSON
 * Schema subset the document uses for them: type (one or a list), enum, $ref, anyOf, items,
 * properties/required; formats and bounds are left to the validator (test/v3-conformance).
 */

/** Every v3 method the client (src/client/derive-client.ts) calls or the simulator (tools/derive-simulator) serves. */
export const V3_METHODS = [
  'public/get_time',
  'public/get_all_instruments',
  'public/get_instrument',
  'public/get_ticker',
  'public/get_currency',
  'private/get_subaccounts',
  'private/get_subaccount',
  'private/get_all_portfolios',
  'private/get_collaterals',
  'private/get_positions',
  'private/get_open_orders',
  'private/get_order',
  'private/get_trade_history',
  'private/order',
  'private/cancel',
  'private/cancel_all',
  'private/transfer_spot',
  'private/withdraw',
  'private/order_debug',
  'public/get_transaction',
  'private/get_deposit_history',
  'private/get_withdrawal_history',
  'private/get_erc20_transfer_history',
  'private/get_interest_history',
  'private/get_funding_history',
  'private/get_option_settlement_history',
  // session keys and the recipient whitelist (docs/exchange-v3.md "Session keys")
  'private/set_session_key',
  'private/edit_session_key',
  'private/session_keys',
  'private/update_whitelisted_recipients',
  'private/get_account',
  // what Derive's own SDK helpers call (derive-ts 3.0.13): the simulator serves them too
  'public/get_all_currencies',
  'public/get_tickers',
  'public/get_all_live_instruments',
  'private/get_order_history',
] as const

export type V3MethodName = (typeof V3_METHODS)[number]

export interface JsonSchema {
  $ref?: string
  type?: string | string[]
  enum?: unknown[]
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  items?: JsonSchema
  properties?: Record<string, JsonSchema>
  required?: string[]
  description?: string
}

interface Operation {
  requestBody?: { content: Record<string, { schema: JsonSchema }> }
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>
}

export interface OpenApiDoc {
  info: { title: string; version: string }
  paths: Record<string, { post?: Operation }>
  components: { schemas: Record<string, JsonSchema> }
}

const refName = (ref: string) => ref.replace('#/components/schemas/', '')

/** The request and result schema of one method (`result` is what the JSON-RPC `result` holds). */
export function methodSchemas(doc: OpenApiDoc, method: string): { params: JsonSchema; result: JsonSchema } {
  const op = doc.paths[`/${method}`]?.post
  const params = op?.requestBody?.content['application/json']?.schema
  const result = op?.responses['200']?.content?.['application/json']?.schema
  if (!params || !result) throw new Error(`${method}: not in the v3 OpenAPI document`)
  return { params, result }
}

function collectRefs(doc: OpenApiDoc, s: JsonSchema | undefined, seen: Set<string>): void {
  if (!s) return
  if (s.$ref) {
    const name = refName(s.$ref)
    if (seen.has(name)) return
    seen.add(name)
    collectRefs(doc, doc.components.schemas[name], seen)
  }
  for (const sub of [...(s.anyOf ?? []), ...(s.oneOf ?? []), s.items, ...Object.values(s.properties ?? {})])
    collectRefs(doc, sub, seen)
}

const PRIMITIVE: Record<string, string> = {
  string: 'string',
  integer: 'number',
  number: 'number',
  boolean: 'boolean',
  null: 'null',
}

const quoteKey = (k: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : `'${k}'`)
const literal = (v: unknown) => (typeof v === 'string' ? `'${v.replaceAll("'", "\\'")}'` : JSON.stringify(v))

/** The TypeScript type of a schema, inline; objects are written on several lines at `indent`. */
function typeOf(s: JsonSchema, indent: string): string {
  if (s.$ref) return refName(s.$ref)
  if (s.enum) return s.enum.map(literal).join(' | ')
  const union = s.anyOf ?? s.oneOf
  if (union) return union.map((u) => typeOf(u, indent)).join(' | ')
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : []
  if (types.length === 0) return 'unknown'
  return types
    .map((t) => {
      if (t === 'array') return `Array<${s.items ? typeOf(s.items, indent) : 'unknown'}>`
      if (t === 'object') return s.properties ? objectBody(s, indent) : 'Record<string, unknown>'
      return PRIMITIVE[t] ?? 'unknown'
    })
    .join(' | ')
}

function comment(text: string | undefined, indent: string): string {
  if (!text) return ''
  const one = text.replaceAll('*/', '*\\/').replace(/\s+/g, ' ').trim()
  return `${indent}/** ${one} */\n`
}

function objectBody(s: JsonSchema, indent: string): string {
  const inner = `${indent}  `
  const lines = Object.entries(s.properties ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => {
      const opt = s.required?.includes(k) ? '' : '?'
      return `${comment(v.description, inner)}${inner}${quoteKey(k)}${opt}: ${typeOf(v, inner)}\n`
    })
  return `{\n${lines.join('')}${indent}}`
}

function declaration(name: string, s: JsonSchema): string {
  const doc = comment(s.description, '')
  if (s.properties && !s.$ref && !s.anyOf && !s.oneOf) return `${doc}export interface ${name} ${objectBody(s, '')}\n`
  return `${doc}export type ${name} = ${typeOf(s, '')}\n`
}

/** The whole generated module, deterministic for a given document. */
export function generateWireTypes(doc: OpenApiDoc, methods: readonly string[] = V3_METHODS): string {
  const seen = new Set<string>()
  const entries = methods.map((m) => {
    const { params, result } = methodSchemas(doc, m)
    collectRefs(doc, params, seen)
    collectRefs(doc, result, seen)
    return `  '${m}': { params: ${typeOf(params, '  ')}; result: ${typeOf(result, '  ')} }\n`
  })
  const names = [...seen].sort()
  const decls = names.map((n) => {
    const s = doc.components.schemas[n]
    if (!s) throw new Error(`schema ${n} is referenced but not defined`)
    return declaration(n, s)
  })
  return [
    '// Generated by packages/exchange/scripts/gen-v3-types.ts from test/spec/v3/openapi.json\n',
    `// (${doc.info.title} ${doc.info.version}). Do not edit: change the generator or the method list and rerun it.\n`,
    decls.join('\n'),
    '\n/** Params and result of every v3 method the client uses, by method name. */\n',
    `export interface V3Wire {\n${entries.join('')}}\n`,
  ].join('')
}
