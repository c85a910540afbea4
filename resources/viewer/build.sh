#!/bin/sh
# Rebuild the vendored viewer (three.js with GLTFLoader and OrbitControls) from npm:
#   sh resources/viewer/build.sh [VERSION]      (VERSION of three, default: the one in VERSION.txt)
# It needs node and npm (the npm registry); it writes three-viewer.min.js, LICENSE-three.txt and
# VERSION.txt beside itself. The page's own code is in app/export/viewer_page.html, not here.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-$(sed -n 's/^three \([0-9.]*\).*/\1/p' "$here/VERSION.txt")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund "three@$version" esbuild@0.28 >/dev/null
cp "$here/three-entry.js" entry.js
npx esbuild entry.js --bundle --minify --format=iife --legal-comments=inline --target=es2020 \
    --banner:js="/*! three.js r$version, https://threejs.org, MIT licence (LICENSE-three.txt); with its GLTFLoader and OrbitControls */" \
    --outfile="$here/three-viewer.min.js"
cp node_modules/three/LICENSE "$here/LICENSE-three.txt"
echo "three $(node -p "JSON.parse(require('fs').readFileSync('node_modules/three/package.json')).version") (MIT), bundled by esbuild $(npx esbuild --version)" \
    > "$here/VERSION.txt"
