#!/usr/bin/env bash
# Regenerate emq_lab/_browser/fengari.js (fengari + lite/fengari-entry.js, one minified IIFE that
# sets globalThis.emqFengari) and its licence file, from npm only. Versions: lite/pins.env.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/pins.env"
work="$here/.cache/fengari"
out="$here/../emq_lab/_browser"
mkdir -p "$work"
cp "$here/fengari-entry.js" "$work/entry.js"
cd "$work"
[ -f package.json ] || echo '{"private": true}' > package.json
npm install --no-audit --no-fund --silent "fengari@$FENGARI" "esbuild@$ESBUILD"
# process/window undefined: the Node-only (fs, readline) and DOM-only branches drop out, so the
# same file runs in a browser worker and in Node.
npx esbuild entry.js --bundle --minify --format=iife --platform=browser \
  --define:process.env.FENGARICONF=undefined --define:process=undefined --define:window=undefined --legal-comments=inline \
  --banner:js="/* fengari $FENGARI (MIT, see LICENSE-fengari) bundled by lite/build-fengari.sh */" \
  --outfile="$out/fengari.js"
{
  cat node_modules/fengari/LICENSE
  printf "\n---- sprintf-js (bundled into fengari's string.format) ----\n\n"
  cat node_modules/sprintf-js/LICENSE
} > "$out/LICENSE-fengari"
