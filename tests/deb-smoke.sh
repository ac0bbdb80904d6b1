#!/usr/bin/env bash
# The .deb smoke: builds the Debian package with the Tauri CLI (debug profile, so it
# reuses the test build), checks what it holds (binary, desktop entry with its folder
# action and MIME type, icons at every size), installs it with dpkg, starts the
# installed app from its desktop entry on a folder (gio launch, as a file manager
# would) under Xvfb, waits for its window, saves a screenshot to
# target/e2e-artifacts/deb-smoke.png, and removes the package again.
#
# Needs root (dpkg -i), and what ./dev.sh test installs. Run: tests/deb-smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
say() { printf '\033[1;36m==>\033[0m %s\n' "$*" >&2; }
fail() { printf 'deb-smoke: %s\n' "$*" >&2; exit 1; }

say "building the .deb"
ui/node_modules/.bin/tauri build --debug --bundles deb --ci
DEB=$(ls -t "$TARGET"/debug/bundle/deb/*.deb | head -1)
[ -f "$DEB" ] || fail "no .deb was built"

say "checking $DEB"
contents=$(dpkg-deb -c "$DEB")
has() { grep -qE " (\./)?$1\$" <<<"$contents"; }
for f in usr/bin/decode usr/bin/decode-window usr/share/applications/Decode.desktop; do
  has "$f" || fail "$f is not in the package"
done
for size in 16x16 32x32 48x48 64x64 128x128 256x256 512x512; do
  has "usr/share/icons/hicolor/$size/apps/decode-window.png" || fail "no $size icon in the package"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$DEB" "$work/root"
desktop="$work/root/usr/share/applications/Decode.desktop"
desktop-file-validate "$desktop"
grep -qx 'MimeType=inode/directory;' "$desktop" || fail "the desktop entry does not offer folders"
grep -qx 'Name=Open folder in Decode' "$desktop" || fail "the desktop entry has no folder action"
dpkg-deb -f "$DEB" Depends | grep -q libwebkit2gtk-4.1-0 || fail "the package does not depend on WebKitGTK"
dpkg-deb -f "$DEB" Depends | grep -q bubblewrap || fail "the package does not depend on bubblewrap (the bash sandbox)"

say "installing it"
dpkg -i "$DEB"
cleanup() { dpkg -r decode >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
[ -x /usr/bin/decode ] || fail "/usr/bin/decode was not installed"
[ -x /usr/bin/decode-window ] || fail "/usr/bin/decode-window was not installed"
/usr/bin/decode --version
# The command line links no GUI library (it starts in milliseconds).
if readelf -d /usr/bin/decode | grep NEEDED | grep -Ei 'webkit|gtk|gdk|soup'; then
  fail "/usr/bin/decode links a GUI library"
fi

say "starting the installed app from its desktop entry, under Xvfb"
mkdir -p "$work/home" "$work/project" "$TARGET/e2e-artifacts"
shot="$TARGET/e2e-artifacts/deb-smoke.png"
HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share" \
  XDG_STATE_HOME="$work/home/.local/state" XDG_RUNTIME_DIR="$work/home" \
  DBUS_SESSION_BUS_ADDRESS="unix:path=$work/home/no-bus" \
  xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" bash -c '
    # As a file manager would: the entry, given the folder (its %f).
    gio launch /usr/share/applications/Decode.desktop "$1" >"$2/app.log" 2>&1 &
    win=
    for _ in $(seq 1 150); do
      win=$(xdotool search --onlyvisible --name "^Decode — .*project" 2>/dev/null | head -1)
      [ -n "$win" ] && break
      sleep 0.2
    done
    sleep 2
    import -window root "$3"
    [ -n "$win" ] || { cat "$2/app.log" >&2; pkill -x decode-window; exit 1; }
    pid=$(xdotool getwindowpid "$win" 2>/dev/null || true)
    [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = /usr/bin/decode-window ] ||
      { echo "the window is not the installed binary" >&2; pkill -x decode-window; exit 1; }
    kill "$pid"
  ' _ "$work/project" "$work" "$shot" || fail "the installed app showed no window"
echo "e2e: screenshot $shot"
say "the .deb installs and starts from its desktop entry"
