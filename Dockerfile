# syntax=docker/dockerfile:1
# The platform-apiserver image: `docker build -t platform-apiserver .`
# Build stage: compile TypeScript, bundle the console and build the native sqlite module, then keep only
# production dependencies. Runtime stage: distroless Node.js, non-root, nothing else.

FROM node:20-bookworm-slim AS build
WORKDIR /src
# better-sqlite3 is compiled here from its npm sources (no prebuilt download).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_build_from_source=true
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY cmd ./cmd
COPY pkg ./pkg
# The console's sources: npm run build bundles them (Vite) into dist/console, which
# the server serves at /console/.
COPY console ./console
COPY hack/build-console.mjs ./hack/build-console.mjs
RUN npm run build \
 && test -f dist/console/index.html \
 && find dist -name '*.test.js' -delete -o -name '*.test.js.map' -delete \
 && npm prune --omit=dev --no-audit --no-fund

FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# 65532 is distroless's "nonroot"; the Helm chart runs the pod as the same uid.
USER 65532:65532
EXPOSE 8443
# The image's node binary runs the server with the server's node flags
# (pkg/server/node-flags.ts: a fixed 16 MiB young generation); the server's flags
# (docker run ... --flag, or the pod's args) follow. The chart sets args only, never
# command, so this entry point is how every pod starts. In a container the server must
# listen on all interfaces.
ENTRYPOINT ["/nodejs/bin/node", "--min-semi-space-size=16", "--max-semi-space-size=16", "--heap-growing-percent=100", "/app/dist/cmd/apiserver/main.js"]
CMD ["--bind-address=0.0.0.0"]
