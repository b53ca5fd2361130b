# Multi-stage build for the API and the worker (one image each, non-root).
# TypeScript runs through tsx; the workspace packages export their sources.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
RUN npm install -g pnpm@12 --loglevel=error
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json ./
COPY apps/api/package.json apps/api/
COPY apps/worker/package.json apps/worker/
COPY packages/ packages/
RUN pnpm install --frozen-lockfile --prod=false

FROM node:20-bookworm-slim AS base
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/packages ./packages
COPY package.json pnpm-workspace.yaml tsconfig.base.json ./
COPY drizzle ./drizzle
COPY apps ./apps
RUN chown -R node:node /app
USER node

FROM base AS api
WORKDIR /app/apps/api
EXPOSE 3000
CMD ["node", "--import", "tsx", "src/main.ts"]

FROM base AS worker
WORKDIR /app/apps/worker
CMD ["node", "--import", "tsx", "src/main.ts"]
