#!/usr/bin/env bash
# Check a built collection tarball: within its size budget, the collection only (no tests, scenarios, lab inventory, raw
# benchmark rows or contributor pages inside), every tracked file the collection runs (roles, plugins, playbooks, meta,
# the example inventory) inside, it installs, and its content needs nothing beyond ansible-core (galaxy.yml declares no
# dependency).
set -euo pipefail
tarball=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
# 428,114 bytes on 2026-12-07 (issue 53: 478,699 before README and docs/performance.md were slimmed and the contributor
# pages left the tarball). Issue 53 asked for 300 KB, which the collection itself cannot meet: built without any of
# docs/ it is 385,095 bytes, nearly all of it roles/ and plugins/ (the code the hosts run) and FILES.json. The budget
# leaves ~3 % for growth; raising it is a decision to state in the change that does it. The pages the lab's test runs
# write (docs/reliability*.md, distributed_lab.md, mutation.md: `make results-to-docs`) stay in the repository only.
max_bytes=$((440 * 1024))
size=$(stat -c %s "$tarball")
echo "collection tarball: $tarball ($size bytes, $((size / 1024)) KiB; budget $((max_bytes / 1024)) KiB)"
if [ "$size" -ge "$max_bytes" ]; then
  echo "tarball is $size bytes, over the $((max_bytes / 1024)) KiB budget" >&2
  exit 1
fi
leaked='^(\./)?(molecule|tests|inventory/lab|docs/performance|docs/research|\.cache|\.venv|\.ci|\.config|build|changelogs/fragments)/'
leaked+='|^(\./)?(docs/development\.md|docs/mutation\.md|docs/reliability[a-z_]*\.md|docs/distributed_lab\.md|Makefile|\.yamllint|requirements-[a-z]+\.txt)$'
if tar -tzf "$tarball" | grep -E "$leaked" >&2; then
  echo "tests, scenarios, lab or contributor files leaked into the tarball (see galaxy.yml build_ignore)" >&2
  exit 1
fi
listing=$(tar -tzf "$tarball")
for part in roles/lora_job/files/radeonlab_lora/runner.py plugins/modules/rocm_facts.py playbooks/site.yml inventory/example/hosts.yml; do
  grep -qx "$part" <<<"$listing" || { echo "the tarball lacks $part" >&2; exit 1; }
done
# What the collection runs must ship, whatever build_ignore drops: every tracked file of these paths.
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  missing=$(git -C "$root" ls-files roles plugins playbooks meta inventory/example | grep -vxF -f <(printf '%s\n' "$listing") || true)
  if [ -n "$missing" ]; then
    echo "the tarball lacks files the collection runs (a build_ignore pattern drops them):" >&2
    echo "$missing" >&2
    exit 1
  fi
  echo "every tracked file of roles/, plugins/, playbooks/, meta/ and inventory/example/ is inside: OK"
else
  echo "not a git checkout: the check that every runtime file ships was not run" >&2
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
# With ansible-core alone (the collections of the `ansible` package out of sight), as a user who installs only this
# collection has it: every module and action the content names must resolve. The site and the validation play, then
# every task and handler file (a file only a dynamic include_role reaches is not parsed by the site's syntax check).
root=$dest/ansible_collections/radeonlab/llm
every=$dest/every_task_file.yml
{
  printf -- '- hosts: localhost\n  gather_facts: false\n  tasks:\n'
  for file in "$root"/roles/*/tasks/*.yml "$root"/playbooks/tasks/*.yml; do
    printf '    - ansible.builtin.import_tasks: %s\n' "$file"
  done
  printf '  handlers:\n'
  for file in "$root"/roles/*/handlers/*.yml; do
    printf '    - ansible.builtin.import_tasks: %s\n' "$file"
  done
} >"$every"
for playbook in radeonlab.llm.site radeonlab.llm.validate "$every"; do
  (cd "$dest" && ANSIBLE_COLLECTIONS_PATH=$dest ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false \
    ansible-playbook -i localhost, --syntax-check "$playbook" >/dev/null)
  echo "syntax-check with ansible-core alone, $(basename "$playbook"): OK"
done
echo "installed into a temporary path: OK"
