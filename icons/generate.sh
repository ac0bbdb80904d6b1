#!/usr/bin/env bash
# Regenerates Decode's icon set from drawing primitives (ImageMagick 6).
# The design: a dark rounded tile, a teal gate arch (the permission gate), and a
# bright "D" standing in the gate. Output is committed; rerun after changing this.
set -euo pipefail
cd "$(dirname "$0")"
CONVERT=/usr/bin/convert
FONT=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
S=1024
$CONVERT -size ${S}x${S} gradient:'#1b2333-#0b0f17' \
  \( -size ${S}x${S} xc:none -fill white -draw "roundrectangle 40,40 984,984 200,200" \) \
  -alpha set -compose DstIn -composite -compose Over \
  -fill none -stroke '#2dd4bf' -strokewidth 56 \
  -draw "arc 250,168 774,692 180,360" -draw "line 250,430 250,820" -draw "line 774,430 774,820" \
  -stroke none -fill '#2dd4bf' -draw "rectangle 190,800 834,856" \
  -font "$FONT" -pointsize 430 -fill '#f8fafc' -gravity center -annotate +0+70 'D' \
  icon-1024.png
for size in 16 32 48 64 128 256 512; do
  $CONVERT icon-1024.png -resize ${size}x${size} -depth 8 -define png:color-type=6 "${size}x${size}.png"
done
cp 256x256.png 128x128@2x.png
cp 512x512.png icon.png
cp 64x64.png tray.png
# The tray icon while an approval is waiting: an amber badge in the corner.
$CONVERT tray.png -fill '#f59e0b' -stroke '#0b0f17' -strokewidth 3 \
  -draw "circle 49,15 49,2" -depth 8 -define png:color-type=6 tray-pending.png
$CONVERT icon-1024.png -define icon:auto-resize=256,128,64,48,32,16 icon.ico
rm -f icon-1024.png 512x512.png
