# goalrun worker image (used by docker-compose.yml): `node dist/cli/main.js worker`.
FROM node:20-slim AS build
WORKDIR /app
# Dependencies first, so source edits do not invalidate the npm ci layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The build also bundles the workflow code once (worker/bundle.ts), so workers start without webpack.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-slim
# Agent tools run shell commands in the workspace, sandboxed by bubblewrap; git and ripgrep are what
# coding agents reach for.
RUN apt-get update \
  && apt-get install -y --no-install-recommends bubblewrap ca-certificates git ripgrep \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
COPY --from=build --chown=node:node /app /app
# Not root: tool commands from the model run as this user (uid 1000) in the mounted workspace.
USER node
WORKDIR /workspace
CMD ["node", "/app/dist/cli/main.js", "worker"]
