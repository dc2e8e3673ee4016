#!/usr/bin/env bash
# Builds (or finds) the real secrets stores and Terraform engine used by the store tests:
#   - OpenBao server         -> $CACHE/bin/bao
#   - HashiCorp Vault server -> $CACHE/bin/vault
#   - OpenTofu CLI           -> $CACHE/bin/tofu
#   - hashicorp/vault provider, laid out as a filesystem mirror under $CACHE/provider-mirror
# and writes $CACHE/tofurc (mirror only, no registry) and $CACHE/toolchain.env.
#
# Everything is compiled from Go modules (tools/*/go.mod + go.sum); nothing downloads a
# prebuilt binary (GOTOOLCHAIN=local: not even a Go toolchain). Idempotent: each build is
# skipped when its stamp matches the pin. See docs/toolchain.md.
#
# Environment:
#   SECRETSTORE_IAC_CACHE  cache dir (default: $HOME/.cache/secretstore-iac)
#   SECRETSTORE_IAC_BAO    use this OpenBao server binary instead of building
#   SECRETSTORE_IAC_VAULT  use this HashiCorp Vault server binary instead of building
#   SECRETSTORE_IAC_STORES which stores to provide: "openbao vault" (default), "openbao" or "vault"
#   SECRETSTORE_IAC_TOFU   use this engine binary instead of building
#   SECRETSTORE_IAC_REBUILD=1  ignore stamps and binaries on PATH, rebuild everything
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SECRETSTORE_IAC_CACHE:-$HOME/.cache/secretstore-iac}
BIN=$CACHE/bin
MIRROR=$CACHE/provider-mirror
LOGS=$CACHE/logs
REBUILD=${SECRETSTORE_IAC_REBUILD:-0}

# ---- pins (keep in step with tools/*/go.mod and docs/toolchain.md) -------------------------
BAO_PKG=github.com/openbao/openbao
BAO_VERSION=2.4.0
BAO_COMMIT=f9407a27fbee45f62ba521bba2bf1e2360c61031
BAO_COMMIT_DATE=2025-08-28T20:23:15Z
# An already installed OpenBao server is accepted when `version` prints this.
BAO_ACCEPT='^OpenBao v2\.([4-9]|[1-9][0-9])\.'

# HashiCorp Vault: v1.21.1 is the newest release whose go.mod builds from published sdk/api
# modules (1.21.2+ need an in-tree sdk no tag has). No `ui` tag: no web assets.
VAULT_PKG=github.com/hashicorp/vault
VAULT_VERSION=1.21.1
VAULT_COMMIT=2453aac2638a6ae243341b4e0657fd8aea1cbf18
VAULT_COMMIT_DATE=2025-11-18T21:04:32Z
VAULT_ACCEPT='^Vault v1\.(1[5-9]|2[0-9])\.'
STORES=${SECRETSTORE_IAC_STORES:-openbao vault}

TOFU_PKG=github.com/opentofu/opentofu/cmd/tofu
TOFU_VERSION=1.12.6
TOFU_ACCEPT='^OpenTofu v1\.12\.'

PROVIDER_PKG=github.com/hashicorp/terraform-provider-vault
PROVIDER_BUILT=5.9.0   # the provider source actually compiled (tools/vault-provider/go.mod)
# Version slots the mirror offers: only the version really built. The synthesized stacks ask for
# ">= 5.6.0, < 6.0.0" (lib/constructs/secret-store-stack.ts); the 5.6.0 commit is not on the module proxy.
PROVIDER_SLOTS="5.9.0"
PROVIDER_HOSTS="registry.opentofu.org registry.terraform.io"
PLATFORM=linux_amd64

# ---- Go environment --------------------------------------------------------------------------
export CGO_ENABLED=0
export GOTOOLCHAIN=local          # never fetch a Go toolchain
export GOFLAGS="-p=2 -buildvcs=false -mod=readonly"
LDFLAGS_COMMON="-s -w"

log() { printf '[toolchain] %s\n' "$*"; }
die() { printf '[toolchain] ERROR: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

mkdir -p "$BIN" "$MIRROR" "$LOGS"

# One run at a time per cache dir.
exec 9>"$CACHE/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

T_ALL=$(now)

need_go() {
  command -v go >/dev/null 2>&1 || die "go is not installed (need Go >= 1.26.6 to build the toolchain; or set SECRETSTORE_IAC_BAO / SECRETSTORE_IAC_TOFU)"
}

# Resolve modules for one tools module. With the committed go.sum nothing needs the checksum
# database; if it is still asked for (go.sum incomplete) and unreachable, fall back to GOSUMDB=off.
go_download() { # dir pkg
  local dir=$1 pkg=$2 out
  if out=$(cd "$dir" && go list -deps "$pkg" 2>&1 >/dev/null); then return 0; fi
  if [[ ${GOSUMDB:-} != off ]]; then
    log "resolving modules failed in ${dir#"$ROOT"/}; retrying with GOSUMDB=off (committed go.sum)"
    printf '%s\n' "$out" | tail -5 >&2
    export GOSUMDB=off
    (cd "$dir" && go list -deps "$pkg" >/dev/null) && return 0
  fi
  printf '%s\n' "$out" >&2
  die "cannot download the modules of ${dir#"$ROOT"/}"
}

go_build() { # name dir out pkg ldflags
  local name=$1 dir=$2 out=$3 pkg=$4 ldflags=$5 logf=$LOGS/build-$1.log
  need_go
  go_download "$dir" "$pkg"
  log "$name: building $pkg (log: $logf)"
  if ! (cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$out.tmp" "$pkg") >"$logf" 2>&1; then
    tail -40 "$logf" >&2
    die "$name: go build failed"
  fi
  mv -f "$out.tmp" "$out"
}

# tool_stamp PREFIX TOOL_DIR: the stamp of a build: what was built, and the digest of the Go module
# files that pinned it (a changed pin rebuilds).
tool_stamp() {
  printf '%s %s' "$1" "$(cd "$2" && sha256sum go.mod go.sum | sha256sum | cut -c1-16)"
}

stamp_ok() { # binary stamp-text
  [[ $REBUILD != 1 && -x $1 && -f $1.stamp && "$(cat "$1.stamp")" == "$2" ]]
}

first_line() { "$@" 2>/dev/null | head -n1 || true; }

# resolve_tool VAR NAME OVERRIDE_VAR ACCEPT_REGEX "PATH_CANDIDATES" TOOL_DIR PKG LDFLAGS STAMP_PREFIX
# Sets VAR to the binary to use, in this order: the override variable, the cached pinned build, a
# binary on PATH whose version fits ACCEPT_REGEX, a new build from TOOL_DIR.
resolve_tool() {
  local var=$1 name=$2 override=$3 accept=$4 candidates=$5 dir=$6 pkg=$7 ldflags=$8 stamp t found="" p cand
  t=$(now)
  stamp=$(tool_stamp "$9" "$dir")
  if [[ -n ${!override:-} ]]; then
    [[ -x ${!override} ]] || die "$override=${!override} is not executable"
    found=${!override}; log "$name: using $override ($found) [$(elapsed "$t")]"
  elif stamp_ok "$BIN/$name" "$stamp"; then
    found=$BIN/$name; log "$name: up to date ($found) [$(elapsed "$t")]"
  else
    if [[ $REBUILD != 1 ]]; then
      for cand in $candidates; do
        p=$(command -v "$cand" 2>/dev/null) || continue
        # TF_CLI_CONFIG_FILE=/dev/null: a tofu on PATH must not read a user's CLI config to print its version.
        if TF_CLI_CONFIG_FILE=/dev/null first_line "$p" version | grep -Eq "$accept"; then found=$p; break; fi
      done
    fi
    if [[ -n $found ]]; then
      log "$name: using $found from PATH ($(TF_CLI_CONFIG_FILE=/dev/null first_line "$found" version)) [$(elapsed "$t")]"
    else
      go_build "$name" "$dir" "$BIN/$name" "$pkg" "$ldflags"
      printf '%s' "$stamp" >"$BIN/$name.stamp"
      found=$BIN/$name; log "$name: built in $(elapsed "$t")"
    fi
  fi
  printf -v "$var" '%s' "$found"
}

# ---- store server and engine -------------------------------------------------------------------
resolve_tool BAO bao SECRETSTORE_IAC_BAO "$BAO_ACCEPT" "bao" "$ROOT/tools/openbao" "$BAO_PKG" \
  "$LDFLAGS_COMMON -X $BAO_PKG/version.fullVersion=$BAO_VERSION -X $BAO_PKG/version.GitCommit=$BAO_COMMIT -X $BAO_PKG/version.BuildDate=$BAO_COMMIT_DATE" \
  "openbao $BAO_VERSION $BAO_COMMIT"
if [[ " $STORES " == *" vault "* ]]; then
  resolve_tool VAULT vault SECRETSTORE_IAC_VAULT "$VAULT_ACCEPT" "vault" "$ROOT/tools/vault" "$VAULT_PKG" \
    "$LDFLAGS_COMMON -X $VAULT_PKG/version.GitCommit=$VAULT_COMMIT -X $VAULT_PKG/version.BuildDate=$VAULT_COMMIT_DATE" \
    "vault $VAULT_VERSION $VAULT_COMMIT"
else
  # Not asked for: keep an up-to-date cached build in toolchain.env all the same, so that a run for
  # OpenBao only (npm run bench:store, SECRETSTORE_IAC_STORES=openbao) never hides a Vault built before.
  VAULT=${SECRETSTORE_IAC_VAULT:-}
  if [[ -z $VAULT ]] && stamp_ok "$BIN/vault" "$(tool_stamp "vault $VAULT_VERSION $VAULT_COMMIT" "$ROOT/tools/vault")"; then
    VAULT=$BIN/vault
    log "vault: not asked for; the cached build stays in toolchain.env ($VAULT)"
  fi
fi
resolve_tool TOFU tofu SECRETSTORE_IAC_TOFU "$TOFU_ACCEPT" "tofu" "$ROOT/tools/opentofu" "$TOFU_PKG" \
  "$LDFLAGS_COMMON -X 'github.com/opentofu/opentofu/version.dev=no'" \
  "opentofu $TOFU_VERSION"

# ---- provider (always our own build: it must match the mirror layout) -------------------------
T=$(now)
PROVIDER_BIN=$BIN/terraform-provider-vault
PROVIDER_STAMP=$(tool_stamp "terraform-provider-vault $PROVIDER_BUILT" "$ROOT/tools/vault-provider")
if stamp_ok "$PROVIDER_BIN" "$PROVIDER_STAMP"; then
  log "provider: up to date ($PROVIDER_BUILT) [$(elapsed "$T")]"
else
  go_build provider "$ROOT/tools/vault-provider" "$PROVIDER_BIN" "$PROVIDER_PKG" "$LDFLAGS_COMMON"
  printf '%s' "$PROVIDER_STAMP" >"$PROVIDER_BIN.stamp"
  log "provider: built $PROVIDER_BUILT in $(elapsed "$T")"
fi
for host in $PROVIDER_HOSTS; do
  # Drop slots of earlier layouts (a 5.6.0 slot once held the 5.9.0 build): the mirror tells the truth.
  for old in "$MIRROR/$host/hashicorp/vault"/*; do
    [[ -d $old ]] || continue
    [[ " $PROVIDER_SLOTS " == *" $(basename "$old") "* ]] || rm -rf "$old"
  done
  for v in $PROVIDER_SLOTS; do
    d=$MIRROR/$host/hashicorp/vault/$v/$PLATFORM
    f=$d/terraform-provider-vault_v$v
    if [[ ! -x $f ]] || ! cmp -s "$PROVIDER_BIN" "$f"; then
      mkdir -p "$d"
      ln -f "$PROVIDER_BIN" "$f" 2>/dev/null || cp -f "$PROVIDER_BIN" "$f"
    fi
  done
done

# ---- engine configuration -------------------------------------------------------------------
TOFURC=$CACHE/tofurc
cat >"$TOFURC.tmp" <<EOF
# Written by scripts/toolchain.sh: install providers only from the local mirror.
provider_installation {
  filesystem_mirror {
    path = "$MIRROR"
  }
}
EOF
mv -f "$TOFURC.tmp" "$TOFURC"
mkdir -p "$CACHE/plugin-cache"

q() { printf '%q' "$1"; }
cat >"$CACHE/toolchain.env.tmp" <<EOF
export SECRETSTORE_IAC_BAO=$(q "$BAO")
export SECRETSTORE_IAC_VAULT=$(q "$VAULT")
export SECRETSTORE_IAC_TOFU=$(q "$TOFU")
export TF_CLI_CONFIG_FILE=$(q "$TOFURC")
export TERRAFORM_BINARY_NAME=$(q "$TOFU")
EOF
mv -f "$CACHE/toolchain.env.tmp" "$CACHE/toolchain.env"

log "wrote $CACHE/toolchain.env"
printf '%s\n' "--- store: $("$BAO" version 2>&1 | head -n1)"
[[ -z $VAULT ]] || printf '%s\n' "--- store: $("$VAULT" version 2>&1 | head -n1)"
printf '%s\n' "--- engine: $(TF_CLI_CONFIG_FILE=$TOFURC "$TOFU" version 2>&1 | head -n1)"
log "provider mirror: $MIRROR (hashicorp/vault slots: $PROVIDER_SLOTS; built from $PROVIDER_BUILT)"
log "total $(elapsed "$T_ALL")"
