# syntax=docker/dockerfile:1
# Gatehouse: one static binary (pure-Go SQLite, no cgo) on a small base that
# keeps a busybox wget for the health check.

FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The templ output (*_templ.go) is committed, so no templ CLI is needed here.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/gatehouse ./cmd/gatehouse

FROM alpine:3.22
RUN adduser -D -H -u 10001 gatehouse && mkdir /data && chown gatehouse:gatehouse /data
COPY --from=build /out/gatehouse /usr/local/bin/gatehouse
USER gatehouse
WORKDIR /data
# SQLite by default (one replica); set GATEHOUSE_DATABASE=postgres://… to run several.
ENV GATEHOUSE_DATABASE=sqlite:/data/gatehouse.db
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s CMD wget -qO- http://127.0.0.1:8080/healthz >/dev/null || exit 1
ENTRYPOINT ["gatehouse"]
CMD ["serve", "--addr", "0.0.0.0:8080"]
