#!/usr/bin/env bash
# Stage the site's files into $1 (emptied first): the course's notebooks folder as committed, each
# dive without its outputs (the site opens the learner's copy: no answer on the page before its
# question). In a git checkout the files come from HEAD (git archive), never the working tree: a
# learner's edits, added cells and own files stay out. Elsewhere (a source tarball), every file
# that is not hidden. Called by lite/build.sh (step 4).
set -euo pipefail
contents="$1"
repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
rm -rf "$contents"
mkdir -p "$contents"
committed="$(mktemp -d -t emq-stage-XXXXXX)"
trap 'rm -rf "$committed"' EXIT
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$repo" archive --format=tar HEAD notebooks | tar -x -C "$committed"
else
  mkdir -p "$committed/notebooks"
  (cd "$repo/notebooks" && find . -mindepth 1 -name '.*' -prune -o -type f -print0 |
    while IFS= read -r -d '' file; do cp --parents "$file" "$committed/notebooks"; done)
fi
(cd "$committed/notebooks" && find . -type f -print0 | while IFS= read -r -d '' file; do
  mkdir -p "$contents/$(dirname "$file")"
  case "$file" in
    ./[0-9][0-9]-*.ipynb) "$python" "$repo/emq_lab/copies.py" strip "$file" "$contents/$file" ;;
    *) cp "$file" "$contents/$file" ;;
  esac
done)
