# Build a static binary, then run it as a non-root user on a minimal image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# /data holds the database: 0700, so only the server's user (nonroot, 65532)
# can open it. COPY keeps the mode, and a new named volume starts as a copy of
# it; a bind-mounted host directory keeps its own mode (docs/deploy.md).
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/gatehouse ./cmd/gatehouse && mkdir -m 0700 /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gatehouse /usr/local/bin/gatehouse
COPY --from=build --chown=nonroot:nonroot /out/data /data
USER nonroot:nonroot
WORKDIR /data
VOLUME /data
EXPOSE 8080
ENV GATEHOUSE_ADDR=0.0.0.0:8080 GATEHOUSE_DATABASE=sqlite:/data/gatehouse.db
ENTRYPOINT ["/usr/local/bin/gatehouse"]
CMD ["serve"]
