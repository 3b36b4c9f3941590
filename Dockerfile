# gatehouse's production image: Node.js 24 running the TypeScript sources directly (no build step),
# production dependencies only, as the unprivileged `node` user. docs/deployment.md explains it;
# test/e2e/production-install.test.ts performs the same install and start without a container
# runtime, and fails when a file named here moves.
#
#   docker build -t gatehouse .
#   docker run -p 8080:8080 -e GATEHOUSE_ISSUER=http://localhost:8080/uas -v gatehouse-data:/data gatehouse

ARG NODE_IMAGE=node:24-bookworm-slim

# Production dependencies, installed from the lockfile. No install scripts run: every native
# module gatehouse uses (argon2) ships prebuilt binaries as optional dependencies.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# The web SSO example of docker-compose.yml, which uses openid-client (a devDependency). Not the
# default target: `docker build .` builds the production image below.
FROM ${NODE_IMAGE} AS web-sso-example
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY examples ./examples
USER node
CMD ["sh", "examples/web-sso/compose-start.sh"]

# The production image. It listens on every interface and sets no issuer: give GATEHOUSE_ISSUER
# (the https URL clients use, or http://localhost:8080/uas to try it on this machine), or the server
# stops at once with one line saying so (docs/deployment.md, "Container image").
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    GATEHOUSE_HOST=0.0.0.0 \
    GATEHOUSE_PORT=8080 \
    GATEHOUSE_DATABASE_URL=sqlite:/data/gatehouse.db
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
# The application files stay root's and read-only to the server; only /data (the SQLite store,
# when no PostgreSQL URL is given) is writable by it. `gatehouse` is the CLI on the PATH.
RUN mkdir /data && chown node:node /data && chmod 0750 /data \
    && ln -s /app/bin/gatehouse.js /usr/local/bin/gatehouse
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["node", "src/healthcheck.ts"]
# SIGTERM drains in-flight requests for GATEHOUSE_SHUTDOWN_TIMEOUT (10 s) then exits: give
# `docker stop` a longer grace period (`--time 20`, compose `stop_grace_period`).
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=4", "src/main.ts"]
