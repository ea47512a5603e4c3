#!/usr/bin/env bash
# CI never rewrites tracked files (issue 46): fail, naming each path, when the work tree has a change git would show
# (a tracked file changed, added or deleted, or an untracked file that .gitignore does not cover). Generated result
# pages go to build/results/ (git-ignored); `make results-to-docs` is the one way they reach docs/.
#
#   tests/tools/check_clean_tree.sh              the tree must be clean (the end of a clean clone's `make test`)
#   tests/tools/check_clean_tree.sh --save FILE  note the changes there are now (the start of `make test`) ...
#   tests/tools/check_clean_tree.sh --since FILE ... and fail on any change since: a path not noted, or noted with
#                                                other content (a developer's own uncommitted edits pass)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

# One line per path git shows: its status, the path, and its content's hash ("-" where there is no file).
changes() {
  local line path
  git status --porcelain=v1 --untracked-files=all | while IFS= read -r line; do
    path=${line:3}
    path=${path##* -> }  # a rename: the new path
    if [ -f "$path" ] && [ ! -L "$path" ]; then
      printf '%s\t%s\n' "$line" "$(git hash-object -- "$path")"
    else
      printf '%s\t-\n' "$line"
    fi
  done
}

case "${1:-}" in
  --save)
    changes >"$2"
    exit 0
    ;;
  --since)
    [ -f "$2" ] || { echo "check_clean_tree: no saved state $2 (--save it first)" >&2; exit 2; }
    new=$(changes | grep -vxF -f "$2" || true)
    ;;
  "")
    new=$(changes)
    ;;
  *)
    echo "usage: $0 [--save FILE | --since FILE]" >&2
    exit 2
    ;;
esac

if [ -n "$new" ]; then
  echo "check_clean_tree: the run changed the work tree (CI never rewrites tracked files; generated pages belong in" \
       "build/results/, see tests/lab/faults/faultlab.py results_page):"
  printf '%s\n' "$new" | cut -f1 | sed 's/^/  /'
  exit 1
fi
if [ -n "${1:-}" ]; then echo "check_clean_tree: no change to the work tree since $2"; else echo "check_clean_tree: the work tree is clean"; fi
