#!/usr/bin/env bash
# Stage the site's files into $1 (emptied first): the course's notebooks folder only. After a
# learner's session notebooks/ also holds .ipynb_checkpoints, .hypothesis, .virtual_documents and
# the learner's own files; in a git checkout only the tracked files go in, elsewhere every file
# that is not hidden. Called by lite/build.sh (step 4).
set -euo pipefail
contents="$1"
repo="$(cd "$(dirname "$0")/.." && pwd)"
rm -rf "$contents"
mkdir -p "$contents"
course_files() {
  if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z -- .
  else
    find . -mindepth 1 -name '.*' -prune -o -type f -print0
  fi
}
(cd "$repo/notebooks" && course_files | while IFS= read -r -d '' file; do
  [ ! -f "$file" ] || cp --parents "$file" "$contents"
done)
