#!/usr/bin/env bash
# Regenerates the PNG icons in icons/ from the SVG sources in icons/src/ (needs rsvg-convert from
# librsvg2-bin and ImageMagick; scripts/setup.sh installs both). The PNGs are committed, so building
# and packaging never need this script.
#
# App icon: every size the hicolor theme lists for apps, so desktop environments pick a drawn size
# instead of scaling (16–48 for menus, panels and lists; 64–512 for launchers, docks and app
# grids), plus 128x128@2x for HiDPI. The package also carries icons/src/app.svg as the scalable icon.
set -euo pipefail
cd "$(dirname "$0")/../icons"
png() { rsvg-convert -w "$2" -h "$2" "src/$1.svg" -o "$3.tmp.png" && convert "$3.tmp.png" -define png:exclude-chunks=date,time "PNG32:$3" && rm "$3.tmp.png"; }
for size in 16 24 32 48 64 128 256 512; do png app "$size" "${size}x${size}.png"; done
png app 256 128x128@2x.png
for s in idle running needs-input failed finished; do png "tray-$s" 64 "tray-$s.png"; done
