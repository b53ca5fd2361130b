/**
 * Bull Board at /admin/queues behind HTTP basic auth (user "admin", ADMIN_PASSWORD), read-only unless
 * BULL_BOARD_READ_ONLY=false: retrying or removing a money job is a decision for the operator desk's
 * recorded actions (docs/operations.md), not a click.
 * Not mounted at all when no password is configured.
 */
import { timingSafeEqual } from 'node:crypto'
import { createBullBoard } from '@bull-board/api'
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter'
import { FastifyAdapter } from '@bull-board/fastify'
import { UnauthorizedError } from '@wh/core'
import type { Queue } from 'bullmq'
import type { FastifyInstance } from 'fastify'

export const BULL_BOARD_PATH = '/admin/queues'

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export async function bullBoardRoutes(
  app: FastifyInstance,
  opts: { queues: Queue[]; password: string; readOnly: boolean },
) {
  const expected = `Basic ${Buffer.from(`admin:${opts.password}`).toString('base64')}`
  app.addHook('onRequest', async (request, reply) => {
    if (!safeEqual(request.headers.authorization ?? '', expected)) {
      reply.header('www-authenticate', 'Basic realm="bull-board"')
      throw new UnauthorizedError()
    }
  })
  const serverAdapter = new FastifyAdapter()
  serverAdapter.setBasePath(BULL_BOARD_PATH)
  createBullBoard({
    queues: opts.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: opts.readOnly })),
    serverAdapter,
  })
  await app.register(serverAdapter.registerPlugin(), { prefix: BULL_BOARD_PATH })
}
