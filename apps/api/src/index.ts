export { currentUser, requireAuth } from './plugins/auth'
export { buildServer, type ServerDeps } from './server'
