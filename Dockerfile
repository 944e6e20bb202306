# syntax=docker/dockerfile:1
# Conduit: build the single binary with the pinned Bun, run it on a minimal
# glibc base as a non-root user, with the database in the /data volume.

FROM oven/bun:1.4.5 AS build
WORKDIR /src
COPY package.json bun.lock bunfig.toml tsconfig.json ./
RUN bun install --frozen-lockfile --production
COPY src ./src
# the same command CI runs: bun build --compile --bytecode --minify -> dist/conduit
RUN bun run build && mkdir -p /data

# distroless "cc": glibc and libstdc++ only, no shell, no package manager
FROM gcr.io/distroless/cc-debian12:nonroot
WORKDIR /app
COPY --from=build /src/dist/conduit /app/conduit
COPY --from=build --chown=65532:65532 /data /data
ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_PATH=/data/conduit.db \
    LOG_FORMAT=json
USER 65532:65532
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 CMD ["/app/conduit", "healthcheck"]
# SIGTERM (docker stop) drains in-flight requests and checkpoints the database
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/conduit"]
CMD ["serve"]
