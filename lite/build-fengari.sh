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
rm -rf node_modules/fengari # pristine before the patches below
npm install --no-audit --no-fund --silent "fengari@$FENGARI" "esbuild@$ESBUILD"
# The work meter (see lite/fengari-entry.js): a few lines patched into fengari's own source, so
# that every VM instruction, every call of a JS function, every string allocation or formatting,
# every new table key, every table access of the table library, every copy of string.rep and every
# step of the pattern matcher is counted, whatever hook a script set or cleared.
# Each anchor must be found exactly once (else the fengari pinned in pins.env changed: stop).
node - "node_modules/fengari/src" <<'JS'
const fs = require("fs");
const path = require("path");
const src = process.argv[2];
fs.writeFileSync(path.join(src, "emqmeter.js"),
  "\"use strict\";\n// Filled in by lite/fengari-entry.js.\n" +
  "module.exports = { fuel: 2 ** 52, CALL: 0, ACCESS: 0, COPY: 0, FORMAT: 0, NEWKEY: 0, out() {}, bytes() {}, steps() {} };\n");
const REQUIRE = "const emqmeter = require('./emqmeter.js');\n";
const patches = {
  "lvm.js": [
    ["const ldo     = require('./ldo.js');\n", REQUIRE],
    ["let i = ci.l_code[ci.l_savedpc++];\n", "        if (--emqmeter.fuel < 0) emqmeter.out(L);\n"],
    ["let buff = new Uint8Array(tl);\n", "            emqmeter.bytes(L, tl, true);\n", true],
  ],
  "ldo.js": [
    ["const ltm      = require('./ltm.js');\n", REQUIRE],
    ["            let n = f(L); /* do the actual call */\n", "            emqmeter.steps(L, emqmeter.CALL);\n", true],
  ],
  "lobject.js": [
    ["const ltable  = require('./ltable.js');\n", REQUIRE],
    ["const luaO_tostring = function(L, obj) {\n", "    emqmeter.fuel -= emqmeter.FORMAT;\n"],
    ["const luaO_pushvfstring = function(L, fmt, argp) {\n", "    emqmeter.fuel -= emqmeter.FORMAT;\n"],
  ],
  "ltable.js": [
    ["const ldebug  = require('./ldebug.js');\n", REQUIRE],
    ["    t.strong.set(hash, entry);\n", "    emqmeter.fuel -= emqmeter.NEWKEY;\n", true],
  ],
  "lstring.js": [
    ["const { lua_assert } = require(\"./llimits.js\");\n", REQUIRE],
    ["    return new TString(L, str);\n", "    emqmeter.bytes(L, str.length, false);\n", true],
  ],
  "lauxlib.js": [
    ["const luaL_prepbuffsize = function(B, sz) {\n", REQUIRE, true],
    ["        let newsize = Math.max(B.b.length * 2, newend);  /* double buffer size */\n",
     "        emqmeter.bytes(B.L, newsize, true);\n"],
  ],
  "lapi.js": [
    ["const lua_geti = function(L, idx, n) {\n", "    emqmeter.steps(L, emqmeter.ACCESS);\n"],
    ["const lua_seti = function(L, idx, n) {\n", "    emqmeter.steps(L, emqmeter.ACCESS);\n"],
    ["const ldo       = require('./ldo.js');\n", REQUIRE],
  ],
  "lstrlib.js": [
    ["const singlematch = function(ms, s, p, ep) {\n", "    emqmeter.steps(ms.L, 1);\n"],
    ["const { sprintf } = require('sprintf-js');\n", REQUIRE],
    ["        let totallen = n * l + (n - 1) * lsep;\n", "        emqmeter.steps(L, n * emqmeter.COPY);\n"],
    ["const str_format = function(L) {\n", "    emqmeter.steps(L, emqmeter.FORMAT);\n"],
  ],
};
for (const [file, edits] of Object.entries(patches)) {
  const where = path.join(src, file);
  let text = fs.readFileSync(where, "utf8");
  for (const [anchor, line, before] of edits) {
    const count = text.split(anchor).length - 1;
    if (count !== 1) {
      console.error(`build-fengari: ${file}: ${JSON.stringify(anchor)} found ${count} times, not once`);
      process.exit(1);
    }
    text = text.replace(anchor, before ? line + anchor : anchor + line);
  }
  fs.writeFileSync(where, text);
}
JS
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
