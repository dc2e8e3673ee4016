#!/usr/bin/env bash
# The store suite against each store (npm run test:store): builds or finds the toolchain
# (scripts/toolchain.sh; the first store's first, the second's while the first store's tests run), then runs jest -c jest.store.config.js --runInBand once per store with
# SECRETSTORE_IAC_STORE set. With SECRETSTORE_IAC_JEST_REPORT_DIR, each run writes its own report,
# store-<store>.json, which scripts/jest-summary.js lists by name. Extra arguments go to jest (a test
# file, -t ...). Fails when any run fails; every store runs even after a failure. Where Terraform is
# absent, each store's run ends with "Terraform absent: N engine-facing tests ran on OpenTofu only"
# (test/support/store/engine-matrix.ts; scripts/jest-summary.js counts them).
#
# With two stores and at least two cpus the runs go side by side ("lanes"): a store test spends about
# half its time waiting for a store, an engine or a pipeline, so two lanes fill the cores that one
# leaves idle (the CI machine's wall time, docs/store-tests.md). The second lane works in a copy of
# this repository (its own dist/, node_modules linked): some tests build dist/ (`npm run demo`,
# `npm run bench:store`, `npm pack`), which must not rewrite files the other lane is loading. The
# whole suite (no extra arguments) goes through one queue of (store, file) shared by both lanes
# (scripts/store-lanes.js): each lane takes its store's files, then the other store's, so neither
# idles while the other has files left. With extra arguments each lane runs one store's jest, and
# the second's output is kept in a file and printed when it ends.
#
#   SECRETSTORE_IAC_STORES       stores to run, in order (default: "openbao vault")
#   SECRETSTORE_IAC_STORE_LANES  "parallel" (default with two stores and >= 2 cpus) or "serial"
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stores=${SECRETSTORE_IAC_STORES:-openbao vault}
read -r -a store_list <<<"$stores"
# What the first store's run needs is built first; with lanes, the second store's server is built
# while the first store's tests run (a new machine's cold build: Vault alone is ~10 min of it).
SECRETSTORE_IAC_STORES=${store_list[0]:-openbao} bash scripts/toolchain.sh
status=0
# Each run's report (a temporary one without SECRETSTORE_IAC_JEST_REPORT_DIR): the Terraform line reads it.
reports=${SECRETSTORE_IAC_JEST_REPORT_DIR:-}
if [[ -z $reports ]]; then
  reports=$(mktemp -d)
  trap 'rm -rf "$reports"' EXIT
fi
# One store's run in directory $1 (the repository or the lane copy); its exit status.
run_store() {
  local dir=$1 store=$2 report=$reports/store-$2.json start
  shift 2
  rm -f "$report"
  echo "test-store: store suite on $store"
  start=$(date +%s)
  local rc=0
  (cd "$dir" && SECRETSTORE_IAC_STORE=$store node node_modules/jest/bin/jest.js -c jest.store.config.js --runInBand --json "--outputFile=$report" "$@") || rc=1
  echo "test-store: store suite on $store done in $(($(date +%s) - start)) s"
  if [[ -f $report ]]; then
    node -e 'const line = require("./scripts/jest-summary.js").terraformAbsentLine([require(process.argv[1])]); if (line) console.log(`test-store: ${line}`);' "$report"
  fi
  return $rc
}
for store in $stores; do
  case $store in openbao | vault) ;; *) echo "test-store: unknown store \"$store\" (openbao or vault)" >&2; exit 2 ;; esac
done
lanes=${SECRETSTORE_IAC_STORE_LANES:-}
if [[ -z $lanes ]]; then
  if ((${#store_list[@]} == 2)) && (($(nproc) >= 2)); then lanes=parallel; else lanes=serial; fi
fi
case $lanes in parallel | serial) ;; *) echo "test-store: SECRETSTORE_IAC_STORE_LANES=$lanes (parallel or serial)" >&2; exit 2 ;; esac
if [[ $lanes == parallel && ${#store_list[@]} == 2 ]]; then
  lane=$(mktemp -d "${TMPDIR:-/tmp}/secretstore-iac-store-lane-XXXXXX")
  trap 'rm -rf "$lane"; [[ -z ${SECRETSTORE_IAC_JEST_REPORT_DIR:-} ]] && rm -rf "$reports"' EXIT
  rsync -a --exclude /node_modules --exclude /dist --exclude '/cdktf.out*' --exclude .terraform ./ "$lane/repo/"
  ln -s "$PWD/node_modules" "$lane/repo/node_modules"
  (cd "$lane/repo" && npm run --silent build >"$lane/build.log" 2>&1) || { cat "$lane/build.log" >&2; echo "test-store: the lane copy did not build" >&2; exit 1; }
  second=${store_list[1]}
  if (($# == 0)); then
    # The whole suite: one queue of (store, file) for both lanes (scripts/store-lanes.js), so that the
    # lane whose store has fewer files takes the other's when its own are done.
    echo "test-store: two lanes side by side, here and in a copy ($lane/repo), sharing the files of ${store_list[*]}"
    node scripts/store-lanes.js --reports "$reports" --stores "$stores" "$PWD" "$lane/repo" || status=1
    exit $status
  fi
  echo "test-store: ${store_list[0]} here and $second in a copy ($lane/repo), side by side; $second's output follows when it ends"
  # The second store's toolchain first (scripts/toolchain.sh holds a lock: a test of the first lane that
  # builds the toolchain itself, `npm run demo`, waits for it rather than building beside it).
  (
    SECRETSTORE_IAC_STORES=$stores bash scripts/toolchain.sh || { echo "test-store: the toolchain for $second did not build" >&2; exit 1; }
    run_store "$lane/repo" "$second" "$@"
  ) >"$lane/$second.log" 2>&1 &
  second_pid=$!
  run_store "$PWD" "${store_list[0]}" "$@" || status=1
  wait "$second_pid" || status=1
  cat "$lane/$second.log"
else
  for store in "${store_list[@]}"; do
    SECRETSTORE_IAC_STORES=$store bash scripts/toolchain.sh || { status=1; continue; }
    run_store "$PWD" "$store" "$@" || status=1
  done
fi
exit $status
