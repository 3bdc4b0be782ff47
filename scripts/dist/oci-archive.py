"""Finishes the image archive `podman save --format oci-archive` wrote, as
Docker's own `docker save` (25 and later) writes one:

- the image's health check goes back into its config: the OCI config has no
  field for it, so podman drops it, while Docker reads `config.Healthcheck`
  from an OCI config blob as from its own;
- a `manifest.json` beside `index.json`, so that `docker load` of any version
  reads the archive, and `podman load` still reads the OCI layout.

Usage: python3 scripts/dist/oci-archive.py ARCHIVE REPO_TAG HEALTHCHECK_JSON
(HEALTHCHECK_JSON: `podman inspect --format '{{json .Config.Healthcheck}}'`
of the image built with `--format docker`). The archive is rewritten in place,
with sorted entries and fixed times, so the same image gives the same bytes.
"""

import hashlib
import io
import json
import sys
import tarfile


def main(archive: str, repo_tag: str, healthcheck: str) -> None:
    with tarfile.open(archive) as tar:
        files = {m.name.removeprefix("./"): tar.extractfile(m).read() for m in tar if m.isfile()}

    def blob(digest: str) -> bytes:
        return files[f"blobs/sha256/{digest.removeprefix('sha256:')}"]

    def put(data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        files[f"blobs/sha256/{digest}"] = data
        return f"sha256:{digest}"

    index = json.loads(files["index.json"])
    (descriptor,) = index["manifests"]
    manifest = json.loads(blob(descriptor["digest"]))
    config = json.loads(blob(manifest["config"]["digest"]))
    del files[f"blobs/sha256/{descriptor['digest'].removeprefix('sha256:')}"]
    del files[f"blobs/sha256/{manifest['config']['digest'].removeprefix('sha256:')}"]

    config["config"]["Healthcheck"] = json.loads(healthcheck)
    config_bytes = json.dumps(config, separators=(",", ":")).encode()
    manifest["config"].update(digest=put(config_bytes), size=len(config_bytes))
    manifest_bytes = json.dumps(manifest, separators=(",", ":")).encode()
    descriptor.update(digest=put(manifest_bytes), size=len(manifest_bytes))
    files["index.json"] = json.dumps(index, separators=(",", ":")).encode()
    files["manifest.json"] = json.dumps(
        [
            {
                "Config": f"blobs/sha256/{manifest['config']['digest'].removeprefix('sha256:')}",
                "RepoTags": [repo_tag],
                "Layers": [
                    f"blobs/sha256/{layer['digest'].removeprefix('sha256:')}"
                    for layer in manifest["layers"]
                ],
            }
        ],
        separators=(",", ":"),
    ).encode()

    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
        for name in ["blobs", "blobs/sha256"]:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(files[name]), 0o644
            tar.addfile(info, io.BytesIO(files[name]))


if __name__ == "__main__":
    main(*sys.argv[1:])
