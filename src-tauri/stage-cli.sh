#!/usr/bin/env bash
# Run by `tauri build` before bundling (tauri.conf.json, beforeBundleCommand): builds
# the command-line binary `decode` in the bundle's profile and stages it where the
# .deb takes it from (bundle.linux.deb.files → /usr/bin/decode, beside the window
# binary /usr/bin/decode-window that the bundle carries itself).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
profile=release
flags=(--release)
if [ "${TAURI_ENV_DEBUG:-false}" = true ]; then
  profile=debug
  flags=()
fi
(cd "$root" && cargo build "${flags[@]}" --bin decode)
target=${CARGO_TARGET_DIR:-$root/target}
mkdir -p "$here/bundle-bin"
cp "$target/$profile/decode" "$here/bundle-bin/decode"
