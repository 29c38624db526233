#!/usr/bin/env bash
# Installs, upgrades or removes hermes as a systemd service. Idempotent: running it again upgrades the
# code and units and keeps the config, the secrets and the data.
#
#   sudo deploy/install.sh                 install or upgrade (system service, user "hermes")
#   sudo deploy/install.sh --uninstall     remove code and units; keep /etc/hermes and /var/lib/hermes
#   sudo deploy/install.sh --uninstall --purge   also remove the config and the data
#   deploy/install.sh --root DIR           lay the files out under DIR (packaging, tests); no users, no systemctl
#   deploy/install.sh --no-deps            skip `npm ci --omit=dev` (dependencies already in place)
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT=""
MODE="install"
PURGE=0
DEPS=1

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }
fail() { echo "install.sh: $*" >&2; exit 1; }
say() { echo "hermes: $*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --root) ROOT="${2:?--root needs a directory}"; shift 2 ;;
    --root=*) ROOT="${1#--root=}"; shift ;;
    --uninstall) MODE="uninstall"; shift ;;
    --purge) PURGE=1; shift ;;
    --no-deps) DEPS=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; fail "unknown option '$1'" ;;
  esac
done

if [ -n "$ROOT" ]; then
  mkdir -p "$ROOT"
  ROOT="$(cd "$ROOT" && pwd)"
  LIVE=0
else
  [ "$(id -u)" -eq 0 ] || fail "run as root (sudo $0), or use --root DIR to lay out files only"
  [ -d /run/systemd/system ] || fail "this host is not running systemd; start hermes with 'npm start' instead"
  LIVE=1
fi

APP="$ROOT/opt/hermes"
UNIT_DIR="$ROOT/etc/systemd/system"
CONF_DIR="$ROOT/etc/hermes"
STATE_DIR="$ROOT/var/lib/hermes"
BIN="$ROOT/usr/local/bin/hermes"
NODE="$(command -v node || true)"
[ -n "$NODE" ] || fail "node is not installed (Node 20 or newer is needed)"

systemctl_live() { if [ "$LIVE" -eq 1 ]; then systemctl "$@"; else say "(skipped with --root) systemctl $*"; fi; }

context_tokens() {
  "$NODE" -e '
    const { parseDocument } = require(process.argv[1] + "/node_modules/yaml");
    const fs = require("fs");
    const doc = fs.existsSync(process.argv[2]) ? parseDocument(fs.readFileSync(process.argv[2], "utf8")) : null;
    console.log(Number(doc?.getIn(["model", "context_tokens"])) || 16384);
  ' "$SRC" "$CONF_DIR/hermes.yaml"
}

install_app() {
  say "installing the application to $APP"
  mkdir -p "$APP"
  rm -rf "$APP/dist"
  cp -R "$SRC/dist" "$SRC/package.json" "$SRC/package-lock.json" "$SRC/README.md" "$SRC/docs" "$SRC/config" "$APP/"
  mkdir -p "$APP/scripts" && cp "$SRC/scripts/prepare.mjs" "$APP/scripts/"   # npm ci's prepare step
  if [ "$DEPS" -eq 1 ]; then
    (cd "$APP" && npm ci --omit=dev --ignore-scripts=false --no-audit --no-fund)
  else
    say "(skipped with --no-deps) npm ci --omit=dev"
  fi
  mkdir -p "$(dirname "$BIN")"
  # HERMES_INSTALLED: this command looks for the service's config, not for a ./hermes.yaml (a checkout's).
  printf '#!/bin/sh\nHERMES_INSTALLED=1 exec %s %s/dist/app/hermes.js "$@"\n' "$NODE" "/opt/hermes" > "$BIN"
  chmod 0755 "$BIN"
}

install_config() {
  mkdir -p "$CONF_DIR" "$STATE_DIR"
  chmod 0700 "$STATE_DIR"
  if [ ! -e "$CONF_DIR/hermes.yaml" ]; then
    install -m 0640 "$SRC/deploy/hermes.yaml" "$CONF_DIR/hermes.yaml"
    say "wrote $CONF_DIR/hermes.yaml"
  else
    say "kept $CONF_DIR/hermes.yaml"
  fi
  if [ ! -e "$CONF_DIR/hermes.env" ]; then
    install -m 0640 "$SRC/deploy/hermes.env.example" "$CONF_DIR/hermes.env"
    say "wrote $CONF_DIR/hermes.env (put tokens there)"
  else
    say "kept $CONF_DIR/hermes.env"
  fi
}

install_units() {
  mkdir -p "$UNIT_DIR/ollama.service.d"
  # On Node 20 a V8 flag such as --max-semi-space-size makes Node compile its own modules without their
  # built-in code cache (~17 ms more per start there): the V8 flags are left out on Node before 22
  # (--v8-pool-size is Node's own and stays).
  local flags="s#^##"
  [ "$("$NODE" -p 'process.versions.node.split(".")[0]')" -ge 22 ] || flags="s# --max-semi-space-size=[0-9]*##;s# --no-sparkplug##"
  sed -e "s#^ExecStart=/usr/bin/node #ExecStart=$NODE #" -e "/^ExecStart=/$flags" "$SRC/deploy/hermes.service" > "$UNIT_DIR/hermes.service"
  sed "s#OLLAMA_CONTEXT_LENGTH=[0-9]*#OLLAMA_CONTEXT_LENGTH=$(context_tokens)#" \
    "$SRC/deploy/ollama.service.d/hermes.conf" > "$UNIT_DIR/ollama.service.d/hermes.conf"
  chmod 0644 "$UNIT_DIR/hermes.service" "$UNIT_DIR/ollama.service.d/hermes.conf"
  say "installed $UNIT_DIR/hermes.service and the Ollama drop-in"
}

create_user() {
  if [ "$LIVE" -eq 0 ]; then say "(skipped with --root) create user hermes"; return; fi
  if ! id hermes >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/hermes --shell /usr/sbin/nologin --user-group hermes
    say "created system user hermes"
  fi
  chown -R hermes:hermes "$STATE_DIR"
  chown root:hermes "$CONF_DIR" "$CONF_DIR/hermes.yaml" "$CONF_DIR/hermes.env"
  chmod 0750 "$CONF_DIR"
}

do_install() {
  [ -d "$SRC/dist" ] || fail "build first: npm ci (it builds dist/)"
  install_app
  install_config
  install_units
  create_user
  systemctl_live daemon-reload
  systemctl_live enable hermes.service
  if [ "$LIVE" -eq 1 ] && systemctl is-active --quiet hermes.service; then
    systemctl_live restart hermes.service
  else
    systemctl_live start hermes.service
  fi
  systemctl_live try-restart ollama.service
  say "done. Check it with: sudo hermes doctor"
}

do_uninstall() {
  systemctl_live disable --now hermes.service || true
  rm -f "$UNIT_DIR/hermes.service" "$UNIT_DIR/ollama.service.d/hermes.conf"
  rmdir "$UNIT_DIR/ollama.service.d" 2>/dev/null || true
  systemctl_live daemon-reload
  rm -rf "$APP" "$BIN"
  if [ "$PURGE" -eq 1 ]; then
    rm -rf "$CONF_DIR" "$STATE_DIR"
    say "removed hermes, its config and its data"
  else
    say "removed hermes; kept $CONF_DIR and $STATE_DIR (use --purge to remove them)"
  fi
}

if [ "$MODE" = "install" ]; then do_install; else do_uninstall; fi
