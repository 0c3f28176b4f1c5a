# PushRelay container image. Two stages:
#   build:   the Swift toolchain image runs the same scripts CI runs: scripts/install-deps (the C libraries) and
#            scripts/package (release build with the Swift runtime linked statically, stripped, packed into dist/).
#   runtime: Debian slim with libsqlite3 (libstdc++ and zlib, which the binary also links, are in the base) and the
#            CA certificates (TLS to FCM, APNs and WebPush services): the binary, the example config and the
#            migrations, run as a non-root user.
#
#   docker build -t pushrelay .
#   docker run -d --name pushrelay -p 127.0.0.1:8080:8080 -v pushrelay-data:/var/lib/pushrelay pushrelay
#
# Configuration: mount a YAML file and point PUSHRELAY_CONFIG at it, or set PUSHRELAY_* variables (docs/deployment.md).

FROM swift:6.3-bookworm AS build
WORKDIR /src
COPY scripts/install-deps scripts/install-deps
RUN scripts/install-deps
COPY . .
RUN scripts/package \
 && mkdir /out \
 && tar -C /out --strip-components=1 -xzf dist/pushrelay-*-linux-*.tar.gz

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-0 libstdc++6 zlib1g ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 pushrelay \
 && useradd --system --uid 10001 --gid pushrelay --home-dir /var/lib/pushrelay --no-create-home \
      --shell /usr/sbin/nologin pushrelay \
 && install -d -o pushrelay -g pushrelay -m 0700 /var/lib/pushrelay
COPY --from=build /out/bin/ /usr/local/bin/
COPY --from=build /out/config/pushrelay.example.yaml /etc/pushrelay/pushrelay.example.yaml
COPY --from=build /out/migrations/ /usr/local/share/pushrelay/migrations/
COPY --from=build /out/README.md /usr/local/share/doc/pushrelay/README.md

# Listen on every interface of the container; keep the database on the volume.
ENV PUSHRELAY_HTTP_HOST=0.0.0.0 \
    PUSHRELAY_HTTP_PORT=8080 \
    PUSHRELAY_STORAGE_SQLITE_PATH=/var/lib/pushrelay/pushrelay.sqlite
VOLUME ["/var/lib/pushrelay"]
WORKDIR /var/lib/pushrelay
USER pushrelay:pushrelay
EXPOSE 8080

# GET /health over bash's /dev/tcp (no HTTP client in the image): healthy when the status line says 200.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PUSHRELAY_HTTP_PORT:-8080} && printf 'GET /health HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && head -n1 <&3 | grep -q ' 200 '"]

# SIGTERM stops the server gracefully (requests in flight finish, the database is flushed).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/pushrelay"]
CMD ["serve"]
