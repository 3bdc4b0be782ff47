#!/usr/bin/env bash
# The mock's container image, from mock-server/Containerfile, as an OCI archive
# that `podman load` and `docker load` read:
#
#   bash scripts/dist/image.sh BINARY OUTDIR VERSION
#
# writes OUTDIR/mediagen-mock-VERSION.oci.tar and leaves the image tagged
# mediagen-mock:VERSION in podman's store. BINARY is the stripped mediagen-mock
# scripts/dist.sh built for glibc 2.17. The image's root filesystem is made
# here, from this machine's Debian packages (libc6, ca-certificates), since no
# image registry is reachable; the same context builds with `docker build`.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary="$1" out="$2" version="$3"
image="mediagen-mock:${version}"
archive="${out}/mediagen-mock-${version}.oci.tar"

context="$(mktemp -d)"
trap 'rm -rf "${context}"' EXIT
root="${context}/rootfs"
mkdir -p "${root}/usr/local/bin" "${root}/etc/ssl/certs" "${root}/tmp" "${context}/data"
chmod 1777 "${root}/tmp"
install -m 0755 "${binary}" "${root}/usr/local/bin/mediagen-mock"

# The shared libraries the binary links, each at the path the loader looks for
# it (the file itself, not Debian's symbolic links), and the loader.
while read -r library; do
    mkdir -p "${root}$(dirname "${library}")"
    cp -L "${library}" "${root}${library}"
    echo "  ${library} from $(dpkg -S "${library}" 2>/dev/null | cut -d: -f1 || echo "no package")"
done < <(ldd "${binary}" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')

cp -L /etc/ssl/certs/ca-certificates.crt "${root}/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nmediagen:x:10001:10001:mediagen-mock:/data:/sbin/nologin\n' \
    >"${root}/etc/passwd"
printf 'root:x:0:\nmediagen:x:10001:\n' >"${root}/etc/group"
printf 'hosts: files dns\n' >"${root}/etc/nsswitch.conf"

# The docker format keeps the HEALTHCHECK (the OCI config has no field for it);
# the archive below carries it in the config as Docker's own images do.
podman build --quiet --format docker --timestamp "${SOURCE_DATE_EPOCH:-0}" \
    --label "org.opencontainers.image.version=${version}" \
    --label "org.opencontainers.image.source=https://github.com/mediagen/mediagen" \
    --label "org.opencontainers.image.licenses=MIT OR Apache-2.0" \
    --label "org.opencontainers.image.title=mediagen-mock" \
    -f mock-server/Containerfile -t "${image}" "${context}" >/dev/null
rm -f "${archive}"
podman save --quiet --format oci-archive -o "${archive}" "${image}"
python3 scripts/dist/oci-archive.py "${archive}" "${image}" \
    "$(podman image inspect --format '{{json .Config.Healthcheck}}' "${image}")"
echo "${archive}"
