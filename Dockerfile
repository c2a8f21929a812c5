# Build a static binary, then run it as a non-root user on a minimal image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/gatehouse ./cmd/gatehouse && mkdir /out/data

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
