#!/usr/bin/env bash
# Check a built collection tarball: under 1 MB, nothing from the test bed inside, and it installs.
set -euo pipefail
tarball=$1
max_bytes=$((1024 * 1024))
size=$(stat -c %s "$tarball")
echo "collection tarball: $tarball ($size bytes)"
if [ "$size" -ge "$max_bytes" ]; then
  echo "tarball is $size bytes, over the 1 MB budget" >&2
  exit 1
fi
if tar -tzf "$tarball" | grep -E '^(\./)?(molecule|tests/lab|tests/bed|\.cache|\.venv)/' >&2; then
  echo "test-bed artefacts leaked into the tarball (see galaxy.yml build_ignore)" >&2
  exit 1
fi
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
ANSIBLE_COLLECTIONS_PATH=$dest ansible-galaxy collection install --offline --force -p "$dest" "$tarball" >/dev/null
test -f "$dest/ansible_collections/radeonlab/llm/MANIFEST.json"
ANSIBLE_COLLECTIONS_PATH=$dest ansible-galaxy collection list radeonlab.llm | grep -q '^radeonlab.llm '
# Every module's documentation renders from the installed copy.
for module in "$dest"/ansible_collections/radeonlab/llm/plugins/modules/*.py; do
  [ -e "$module" ] || continue
  name=radeonlab.llm.$(basename "$module" .py)
  ANSIBLE_COLLECTIONS_PATH=$dest ansible-doc "$name" >/dev/null
  echo "ansible-doc $name: OK"
done
echo "installed into a temporary path: OK"
