# SPDX-License-Identifier: GPL-2.0-or-later
# The nodeprobe image for users with a container engine:
#   docker buildx build --platform linux/amd64,linux/arm64,linux/arm/v7 -t ghcr.io/nodeprobe/nodeprobe:0.1.0 .
# Same content as scripts/build-image (which needs no engine and is what CI runs; it cross builds
# the ARM images): both take the file list from scripts/image-rootfs, built on Debian bookworm,
# into two layers on scratch. Here each platform builds natively in its own bookworm (buildx
# runs the ARM ones under QEMU emulation).
ARG DEBIAN=debian:bookworm
FROM ${DEBIAN} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential pkg-config ca-certificates git \
      libfdt-dev libpci-dev libyaml-dev libcurl4-openssl-dev libjansson-dev libyajl-dev \
      libmicrohttpd-dev libssl-dev libre2-dev libdeflate-dev \
      libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler nettle-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ARG SOURCE_DATE_EPOCH
RUN scripts/image-rootfs /out

FROM scratch
# Layer 1: shared libraries (exactly what ldd lists), CA certificates, passwd/group.
COPY --from=build /out/runtime/ /
# Layer 2: the four binaries (nodeprobe, -mirror, -reload, -devices) and the built-in rules.
COPY --from=build /out/app/ /
ENV PATH=/usr/bin
WORKDIR /
USER 65534:65534
ENTRYPOINT ["/usr/bin/nodeprobe"]
LABEL org.opencontainers.image.title=nodeprobe \
      org.opencontainers.image.licenses=GPL-2.0-or-later \
      org.opencontainers.image.source=https://github.com/nodeprobe/nodeprobe
