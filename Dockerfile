# The aiperf image the kubernetes executor's trial Jobs run (aiperf sweep
# --executor kubernetes --image ...): one static binary, nothing else.
# Documented in the README (Sweeps on Kubernetes); not built in CI.
#
#   docker build -t ghcr.io/acme/aiperf:1.2 --build-arg VERSION=1.2 .
FROM golang:1.26-alpine AS build
RUN apk add --no-cache build-base
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# cgo for mattn/go-sqlite3, linked statically against musl.
RUN CGO_ENABLED=1 go build -trimpath -tags 'osusergo netgo sqlite_omit_load_extension' \
    -ldflags "-s -w -X main.version=${VERSION} -linkmode external -extldflags '-static'" \
    -o /out/aiperf ./cmd/aiperf

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/aiperf /usr/local/bin/aiperf
ENV PATH=/usr/local/bin
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/aiperf"]
