#!/usr/bin/env bash
# README's quick start, run as written by a new user: the lines of the bash block under the "quick-start" marker, in a
# fresh HOME with no environment from the Makefile (no ANSIBLE_* variable, no collections path), with the commands of
# the ansible-core in BIN_DIR. Two changes only: the clone comes from a copy of this tree instead of GitHub (the one
# URL the lab changes), and the site's command ends in --syntax-check (nothing is reached over SSH).
#   tests/tools/check_quick_start.sh BIN_DIR
set -euo pipefail
bin_dir=$(cd "${1:?usage: check_quick_start.sh BIN_DIR (where ansible-playbook and ansible-galaxy are)}" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk '/<!-- quick-start/ {marked = 1; next} marked && /^```bash/ {inside = 1; next} inside && /^```/ {exit}
     inside {print}' "$root/README.md" >"$work/commands.sh"
grep -q '^git clone https://github.com/radeonlab/llm.git && cd llm$' "$work/commands.sh" \
  || { echo "README's quick start no longer starts with the clone of github.com/radeonlab/llm" >&2; exit 1; }
grep -q '^ansible-playbook .*radeonlab.llm.site' "$work/commands.sh" \
  || { echo "README's quick start no longer runs the site" >&2; exit 1; }
# The tree as a clone would have it: tracked files and new ones git does not ignore, committed in a repository.
mkdir "$work/origin"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$work/origin")
git -C "$work/origin" init -q
git -C "$work/origin" add -A
git -C "$work/origin" -c user.name=quick-start -c user.email=quick-start@invalid commit -qm tree
sed -i -e "s|^git clone https://github.com/radeonlab/llm.git |git clone -q $work/origin llm |" \
  -e '/^ansible-playbook .*radeonlab.llm.site/s/$/ --syntax-check/' "$work/commands.sh"
echo "quick start, as run (ansible-core from $bin_dir):"
sed 's/^/  $ /' "$work/commands.sh"
mkdir "$work/home"
(cd "$work" && env -i HOME="$work/home" PATH="$bin_dir:/usr/bin:/bin" LANG=C.UTF-8 bash -euo pipefail commands.sh </dev/null) \
  >"$work/out.txt" 2>&1 || { cat "$work/out.txt" >&2; echo "README's quick start failed" >&2; exit 1; }
grep -q '^playbook: .*/ansible_collections/radeonlab/llm/playbooks/site.yml$' "$work/out.txt" \
  || { cat "$work/out.txt" >&2; echo "the site was not parsed from the installed collection" >&2; exit 1; }
echo "README's quick start: OK"
