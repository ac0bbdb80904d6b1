#!/usr/bin/env bash
# Decode's one entry point for people and CI on a fresh Debian 12 machine.
#
#   ./dev.sh run [PROJECT_DIR] [decode options]   set up, build, open the app
#   ./dev.sh test                                  set up, build, run every test
#
# "Set up" installs the missing Debian packages (as root; otherwise it prints the exact
# apt-get line and stops), runs `npm ci` in ui/ and builds the UI, then the app.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)

APT_PACKAGES=(build-essential pkg-config file libwebkit2gtk-4.1-dev libgtk-3-dev
  libayatana-appindicator3-dev librsvg2-dev libsoup-3.0-dev libssl-dev libxdo-dev
  libsecret-1-dev xvfb xauth imagemagick webkit2gtk-driver dbus dbus-x11 gnome-keyring
  xdotool trayer ripgrep fd-find bubblewrap tmux strace desktop-file-utils libglib2.0-bin
  python3 python3-venv python3-pip curl)

# Each step says when it started (minutes:seconds since dev.sh started), so a slow CI
# run shows where its time went.
say() { printf '\033[1;36m==>\033[0m [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }
die() { printf 'dev.sh: %s\n' "$*" >&2; exit 1; }

setup_system() {
  command -v cargo >/dev/null || die "cargo is missing: install Rust (rustup) first"
  command -v npm >/dev/null || die "npm is missing: install Node.js 20 and npm first"
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    local line="apt-get install -y --no-install-recommends ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
      die "missing Debian packages; as root run: apt-get update && $line"
    fi
    say "installing ${#missing[@]} Debian packages"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $line
  fi
}

setup_ui() {
  local stamp=ui/node_modules/.decode-lock-stamp
  if [ ! -f "$stamp" ] || ! cmp -s ui/package-lock.json "$stamp"; then
    say "npm ci (ui/)"
    (cd ui && npm ci --no-audit --no-fund)
    cp ui/package-lock.json "$stamp"
  fi
  say "building the UI"
  (cd ui && npm run build)
}

setup_test_tools() {
  if ! command -v tauri-driver >/dev/null && [ ! -x "${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver" ]; then
    say "installing tauri-driver"
    cargo install tauri-driver --locked
  fi
  if ! cargo fuzz --version >/dev/null 2>&1; then
    say "installing cargo-fuzz"
    cargo install cargo-fuzz --locked
  fi
}

target_dir() { echo "${CARGO_TARGET_DIR:-$ROOT/target}"; }

run_app() {
  setup_system
  setup_ui
  say "building the app"
  cargo build --bin decode --bin decode-window
  say "starting Decode"
  exec "$(target_dir)/debug/decode" "$@"
}

fuzz_smoke() {
  local secs=${FUZZ_SECONDS:-30}
  # cargo fuzz needs nightly flags: use a nightly toolchain when the machine has one,
  # else let the stable compiler accept them.
  local toolchain=()
  if cargo +nightly --version >/dev/null 2>&1; then toolchain=(+nightly); else export RUSTC_BOOTSTRAP=1; fi
  for dir in crates/decode-policy/fuzz crates/decode-core/fuzz; do
    [ -d "$dir" ] || continue
    for target in $(cd "$dir" && cargo "${toolchain[@]}" fuzz list); do
      say "fuzz smoke: $dir $target (${secs}s)"
      # A committed seed corpus (seeds/TARGET) is read besides the working one.
      local corpus=()
      if [ -d "$dir/seeds/$target" ]; then
        mkdir -p "$dir/corpus/$target"
        corpus=("corpus/$target" "seeds/$target")
      fi
      # The bash oracle replays its committed seeds (every past finding) in CI;
      # it is fuzzed for real locally (FUZZ_ORACLE_SECONDS=600 ./dev.sh test, or
      # cargo fuzz run oracle corpus/oracle seeds/oracle in its fuzz folder).
      local budget=(-max_total_time="$secs")
      if [ "$target" = oracle ]; then
        if [ -n "${FUZZ_ORACLE_SECONDS:-}" ]; then budget=(-max_total_time="$FUZZ_ORACLE_SECONDS"); else budget=(-runs=0); fi
      fi
      # A smoke: built without optimisation (half the cold build time; the
      # sanitizer and the seeds are the same), fuzzed for real locally.
      (cd "$dir" && cargo "${toolchain[@]}" fuzz run --dev "$target" "${corpus[@]}" -- "${budget[@]}" -rss_limit_mb=4096 -timeout=30)
    done
  done
}

run_tests() {
  setup_system
  setup_test_tools
  setup_ui
  export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
  say "cargo fmt --check"
  cargo fmt --all --check
  say "clippy"
  cargo clippy --workspace --all-targets -- -D warnings
  # (the e2e target is `test = false`, so --all-targets leaves it out)
  cargo clippy -p decode-tests --test e2e -- -D warnings
  say "cargo test"
  DECODE_REQUIRE_ORACLE=1 cargo test --workspace
  say "UI: type check, lint, unit tests"
  (cd ui && npm run check && npm run lint && npm test)
  say "end-to-end smoke through the real window"
  cargo build --bin decode --bin decode-window
  say "the command line links no GUI library"
  if readelf -d "$(target_dir)/debug/decode" | grep NEEDED | grep -Ei 'webkit|gtk|gdk|soup'; then
    echo "target/debug/decode links a GUI library" >&2
    exit 1
  fi
  # A failing flow's error is printed without anyhow's backtrace, so it stays in
  # the last lines of the log (panics keep theirs).
  RUST_LIB_BACKTRACE=0 xvfb-run -a -s "-screen 0 2560x1600x24 -nolisten tcp" \
    cargo test -p decode-tests --test e2e -- --nocapture --test-threads=1
  say "the .deb package: build, install, start"
  tests/deb-smoke.sh
  fuzz_smoke
  say "all tests passed"
}

case "${1:-}" in
  run) shift; run_app "$@" ;;
  test) shift; run_tests "$@" ;;
  *) echo "usage: ./dev.sh run [PROJECT_DIR] [--agent NAME] [--mode MODE] | ./dev.sh test" >&2; exit 2 ;;
esac
