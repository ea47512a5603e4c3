#!/usr/bin/env bash
# The container test bed: a Docker engine and a systemd-capable Debian 12 base image.
#
#   tests/bed/bed.sh docker   install docker.io if missing, start dockerd unless one answers
#   tests/bed/bed.sh image    build radeonlab/debian12-systemd:<key> unless it exists
#   tests/bed/bed.sh all      both (default)
#   tests/bed/bed.sh tag      print the image reference molecule uses
#
# Idempotent. The engine runs without bridge networking or iptables rules: every lab container
# uses `network_mode: host`, so nothing ever talks to a private-range address. Images cannot be
# pulled here, so the base image is debootstrapped and `docker import`ed, keyed by the content of
# this script's package list and the Debian suite: a second run reuses it.
set -euo pipefail

SUITE=bookworm
MIRROR=${BED_DEBIAN_MIRROR:-http://deb.debian.org/debian}
IMAGE_REPO=radeonlab/debian12-systemd
# What a freshly installed Debian 12 workstation has, plus systemd as PID 1. Everything the roles
# need beyond this they must install themselves.
PACKAGES=systemd,systemd-sysv,dbus,python3,python3-apt,sudo,ca-certificates,procps,iproute2,kmod,locales
CACHE_DIR=${BED_CACHE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/.cache/bed}
DOCKERD_LOG=/var/log/radeonlab-dockerd.log

log() { printf 'bed: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

image_key() {
  printf '%s\n' "$SUITE" "$PACKAGES" "$(sed -n '/^# --- rootfs tweaks ---$/,/^# --- end ---$/p' "$0")" |
    sha256sum | cut -c1-12
}

image_tag() { printf '%s:%s\n' "$IMAGE_REPO" "$(image_key)"; }

ensure_packages() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

ensure_docker() {
  ensure_packages
  if docker info >/dev/null 2>&1; then
    log "docker engine already running"
    return
  fi
  log "starting dockerd (no bridge, no iptables)"
  as_root sh -c "nohup dockerd --bridge=none --iptables=false --ip6tables=false >>'$DOCKERD_LOG' 2>&1 &"
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && { log "docker engine up"; return; }
    sleep 1
  done
  log "dockerd did not answer within 60 s; last log lines:"
  tail -n 20 "$DOCKERD_LOG" >&2 || true
  exit 1
}

build_image() {
  local tag
  tag=$(image_tag)
  if docker image inspect "$tag" >/dev/null 2>&1; then
    log "image $tag present, reused"
    return
  fi
  ensure_packages
  mkdir -p "$CACHE_DIR"
  ROOTFS=$(mktemp -d "$CACHE_DIR/rootfs.XXXXXX")
  trap 'as_root rm -rf "$ROOTFS"' EXIT
  local rootfs=$ROOTFS
  log "debootstrapping Debian $SUITE into $rootfs (a few minutes)"
  as_root debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$MIRROR" >"$CACHE_DIR/debootstrap.log" 2>&1 || {
    tail -n 30 "$CACHE_DIR/debootstrap.log" >&2; exit 1; }
  # --- rootfs tweaks ---
  # Units that make no sense in a container, and a machine-id generated at first boot.
  as_root chroot "$rootfs" systemctl mask systemd-udevd.service systemd-udevd-kernel.socket \
    systemd-udevd-control.socket getty.target console-getty.service systemd-remount-fs.service \
    sys-kernel-debug.mount sys-kernel-tracing.mount dev-hugepages.mount >/dev/null 2>&1
  as_root sh -c ": > '$rootfs/etc/machine-id'"
  as_root sh -c "printf 'en_US.UTF-8 UTF-8\n' > '$rootfs/etc/locale.gen' && chroot '$rootfs' locale-gen >/dev/null"
  as_root rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/archives/"*.deb
  # --- end ---
  log "importing as $tag"
  as_root tar -C "$rootfs" -c . | docker import \
    --change 'CMD ["/lib/systemd/systemd"]' \
    --change 'ENV container=docker' - "$tag" >/dev/null
  docker tag "$tag" "$IMAGE_REPO:latest"
  log "image $tag built"
}

case "${1:-all}" in
  docker) ensure_docker ;;
  image) ensure_docker; build_image ;;
  all) ensure_docker; build_image ;;
  tag) image_tag ;;
  *) echo "usage: $0 [docker|image|all|tag]" >&2; exit 2 ;;
esac
