/**
 * The AsyncAPI 3.0.0 document of the API's WebSockets (served by ./asyncapi.ts at
 * /docs/asyncapi.json; docs/market-data.md "The AsyncAPI document"). Built from channel
 * descriptions (`WsChannel`) whose payloads are the TypeBox schemas the code sends and validates:
 * nothing of a schema is written twice. Each schema is a component named once (its `$id`, as in the
 * OpenAPI document, or the name a message gives it) and referenced wherever it appears; messages
 * are components too, shared by the channels that carry them.
 *
 * Operations are the API's, as AsyncAPI 3 reads them: `send` is what the server sends to a client,
 * `receive` what it receives from one (with the messages it replies with).
 */

/** A TypeBox schema (or any JSON Schema object) as the code holds it. */
export type Schema = object

type Json = Record<string, unknown>

export interface WsMessageExample {
  readonly name: string
  readonly summary?: string
  readonly payload: unknown
}

export interface WsMessage {
  /** its key in components.messages (unique in the document) */
  readonly id: string
  /** its key in a channel's messages: the `type` or `op` it carries */
  readonly name: string
  readonly title: string
  readonly summary: string
  readonly description?: string
  /** the schema the code sends or validates, by identity */
  readonly payload: Schema
  /** the component name of a payload without `$id` (a variant of a union) */
  readonly schemaName?: string
  /** narrows a payload shared by several messages: properties fixed to one value (the ack's `type`) */
  readonly narrow?: Readonly<Record<string, string>>
  readonly examples?: readonly WsMessageExample[]
}

export interface WsCloseCode {
  readonly code: number
  readonly reason: string
}

/** A security scheme (AsyncAPI 3 Security Scheme Object) under the name operations cite. */
export interface WsSecurity {
  readonly name: string
  readonly scheme: Json
}

export interface WsChannel {
  /** its key in channels, and the stem of its operations' ids */
  readonly id: string
  readonly address: string
  readonly title: string
  readonly description: string
  /** the upgrade request's query string (the route's `querystring` schema) */
  readonly query?: Schema
  /** what a client must present (every operation of the channel) */
  readonly security?: readonly WsSecurity[]
  /** client → server */
  readonly receives: readonly WsMessage[]
  /** server → client */
  readonly sends: readonly WsMessage[]
  /** per received message name: the names of the messages the server answers it with */
  readonly replies?: Readonly<Record<string, readonly string[]>>
  /** how the server closes the connection (x-close-codes) */
  readonly closeCodes: readonly WsCloseCode[]
}

export interface AsyncApiInput {
  readonly title: string
  readonly version: string
  readonly description: string
  readonly channels: readonly WsChannel[]
  /** whole unions a client may want by name (their variants are components of their own) */
  readonly schemas?: readonly Schema[]
}

const SCHEMA_REF = '#/components/schemas/'
/** TypeBox's reference to a schema by `$id` (`Type.Unsafe({ $ref: 'WsStrategyState#' })`) */
const ID_REF = /^([A-Za-z0-9_.-]+)#$/

const capitalise = (s: string) => s.replace(/(?:^|[-_ ])([a-z0-9])/g, (_m, c: string) => c.toUpperCase())
const idOf = (s: unknown): string | undefined =>
  typeof s === 'object' && s !== null && typeof (s as Json).$id === 'string' ? ((s as Json).$id as string) : undefined

/**
 * Names every schema once: each node with an `$id` (nested ones too), each message's payload, the
 * extra unions. The same name for two different schemas is an error.
 */
class SchemaNames {
  readonly byNode = new Map<object, string>()
  readonly byName = new Map<string, object>()

  add(node: object, name: string): void {
    const had = this.byName.get(name)
    if (had !== undefined && had !== node && JSON.stringify(had) !== JSON.stringify(node))
      throw new Error(`two different schemas named ${name}`)
    if (had === undefined) this.byName.set(name, node)
    this.byNode.set(node, name)
  }

  /** Names the `$id`s under `node` (and `node` itself when it has one). */
  collect(node: unknown): void {
    if (Array.isArray(node)) for (const n of node) this.collect(n)
    else if (typeof node === 'object' && node !== null) {
      const id = idOf(node)
      if (id !== undefined) this.add(node, id)
      for (const v of Object.values(node)) this.collect(v)
    }
  }

  /** `node` as the document holds it: named schemas below the root become references, `$id`s go. */
  emit(node: unknown, root = true): unknown {
    if (Array.isArray(node)) return node.map((n) => this.emit(n, false))
    if (typeof node !== 'object' || node === null) return node
    const named = this.byNode.get(node) ?? (idOf(node) !== undefined && this.byName.has(idOf(node) as string))
    if (!root && named) return { $ref: SCHEMA_REF + (this.byNode.get(node) ?? idOf(node)) }
    const out: Json = {}
    for (const [k, v] of Object.entries(node)) {
      if (k === '$id') continue
      if (k === '$ref' && typeof v === 'string') {
        const m = ID_REF.exec(v)
        if (!m || !this.byName.has(m[1] as string)) throw new Error(`unresolved schema reference ${v}`)
        out.$ref = SCHEMA_REF + m[1]
      } else out[k] = this.emit(v, false)
    }
    return out
  }
}

function messageObject(m: WsMessage, names: SchemaNames): Json {
  const ref = { $ref: SCHEMA_REF + names.byNode.get(m.payload) }
  const payload = m.narrow
    ? {
        allOf: [
          ref,
          {
            type: 'object',
            properties: Object.fromEntries(Object.entries(m.narrow).map(([k, v]) => [k, { const: v }])),
          },
        ],
      }
    : ref
  return {
    name: m.name,
    title: m.title,
    summary: m.summary,
    ...(m.description !== undefined && { description: m.description }),
    contentType: 'application/json',
    payload,
    ...(m.examples && { examples: m.examples.map((e) => ({ ...e })) }),
  }
}

/** Every message of every channel, by id: one object per id (a message shared by channels is one component). */
function collectMessages(channels: readonly WsChannel[]): Map<string, WsMessage> {
  const byId = new Map<string, WsMessage>()
  for (const c of channels)
    for (const m of [...c.receives, ...c.sends]) {
      const had = byId.get(m.id)
      if (had !== undefined && had !== m) throw new Error(`two different messages with the id ${m.id}`)
      byId.set(m.id, m)
    }
  return byId
}

function channelObject(c: WsChannel, names: SchemaNames): Json {
  const messages: Json = {}
  for (const m of [...c.receives, ...c.sends]) {
    if (m.name in messages) throw new Error(`channel ${c.id} has two messages named ${m.name}`)
    messages[m.name] = { $ref: `#/components/messages/${m.id}` }
  }
  const table = c.closeCodes.map((k) => `| ${k.code} | ${k.reason} |`).join('\n')
  return {
    address: c.address,
    title: c.title,
    description: `${c.description}\n\n**Close codes**\n\n| code | when |\n| --- | --- |\n${table}`,
    messages,
    ...(c.query && {
      bindings: { ws: { method: 'GET', query: names.emit(c.query), bindingVersion: '0.1.0' } },
    }),
    'x-close-codes': c.closeCodes.map((k) => ({ ...k })),
  }
}

function operationsOf(c: WsChannel): Json {
  const channel = { $ref: `#/channels/${c.id}` }
  const msg = (name: string) => ({ $ref: `#/channels/${c.id}/messages/${name}` })
  const security = c.security && {
    security: c.security.map((s) => ({ $ref: `#/components/securitySchemes/${s.name}` })),
  }
  const ops: Json = {}
  for (const m of c.receives) {
    const replies = c.replies?.[m.name]
    for (const r of replies ?? [])
      if (!c.sends.some((s) => s.name === r)) throw new Error(`channel ${c.id}: ${m.name} replies with unknown ${r}`)
    ops[`receive${capitalise(c.id)}${capitalise(m.name)}`] = {
      action: 'receive',
      channel,
      title: `${c.address}: ${m.title}`,
      summary: m.summary,
      messages: [msg(m.name)],
      ...security,
      ...(replies && { reply: { channel, messages: replies.map(msg) } }),
    }
  }
  for (const m of c.sends)
    ops[`send${capitalise(c.id)}${capitalise(m.name)}`] = {
      action: 'send',
      channel,
      title: `${c.address}: ${m.title}`,
      summary: m.summary,
      messages: [msg(m.name)],
      ...security,
    }
  return ops
}

/** The document without `servers` (./asyncapi.ts adds them per request: they name the host that serves it). */
export function buildAsyncApiDocument(input: AsyncApiInput): Json {
  const messages = collectMessages(input.channels)
  const names = new SchemaNames()
  for (const m of messages.values()) {
    const name = idOf(m.payload) ?? m.schemaName
    if (name === undefined) throw new Error(`message ${m.id}: a payload without $id needs a schemaName`)
    names.add(m.payload, name)
  }
  for (const s of input.schemas ?? []) {
    const name = idOf(s)
    if (name === undefined) throw new Error('an extra schema needs an $id')
    names.add(s, name)
  }
  for (const m of messages.values()) names.collect(m.payload)
  for (const s of input.schemas ?? []) names.collect(s)
  for (const c of input.channels) if (c.query) names.collect(c.query)

  const schemas: Json = {}
  for (const [name, node] of [...names.byName].sort(([a], [b]) => a.localeCompare(b))) schemas[name] = names.emit(node)
  const securitySchemes: Json = {}
  for (const c of input.channels) for (const s of c.security ?? []) securitySchemes[s.name] = s.scheme

  return {
    asyncapi: '3.0.0',
    info: { title: input.title, version: input.version, description: input.description },
    defaultContentType: 'application/json',
    channels: Object.fromEntries(input.channels.map((c) => [c.id, channelObject(c, names)])),
    operations: Object.assign({}, ...input.channels.map(operationsOf)),
    components: {
      schemas,
      messages: Object.fromEntries([...messages].map(([id, m]) => [id, messageObject(m, names)])),
      ...(Object.keys(securitySchemes).length > 0 && { securitySchemes }),
    },
  }
}
