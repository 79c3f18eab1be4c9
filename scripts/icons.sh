#!/usr/bin/env bash
# Regenerates the PNG icons in icons/ from the SVG sources in icons/src/ (needs rsvg-convert from
# librsvg2-bin and ImageMagick). The PNGs are committed, so building never needs this script.
set -euo pipefail
cd "$(dirname "$0")/../icons"
png() { rsvg-convert -w "$2" -h "$2" "src/$1.svg" -o "$3.tmp.png" && convert "$3.tmp.png" "PNG32:$3" && rm "$3.tmp.png"; }
png app 32 32x32.png
png app 128 128x128.png
png app 256 128x128@2x.png
png app 512 icon.png
for s in idle running needs-input failed finished; do png "tray-$s" 64 "tray-$s.png"; done
