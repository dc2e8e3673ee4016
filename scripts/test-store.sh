#!/usr/bin/env bash
# The store suite against each store, one after the other (npm run test:store): builds or finds the
# toolchain (scripts/toolchain.sh), then runs jest -c jest.store.config.js --runInBand once per store
# with SECRETSTORE_IAC_STORE set. With SECRETSTORE_IAC_JEST_REPORT_DIR, each run writes its own
# report, store-<store>.json, which scripts/jest-summary.js lists by name. Extra arguments go to jest
# (a test file, -t ...). Fails when any run fails; every store runs even after a failure.
#
#   SECRETSTORE_IAC_STORES  stores to run, in order (default: "openbao vault")
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stores=${SECRETSTORE_IAC_STORES:-openbao vault}
SECRETSTORE_IAC_STORES=$stores bash scripts/toolchain.sh
status=0
for store in $stores; do
  case $store in openbao | vault) ;; *) echo "test-store: unknown store \"$store\" (openbao or vault)" >&2; exit 2 ;; esac
  report=()
  if [[ -n ${SECRETSTORE_IAC_JEST_REPORT_DIR:-} ]]; then
    report=(--json "--outputFile=$SECRETSTORE_IAC_JEST_REPORT_DIR/store-$store.json")
  fi
  echo "test-store: store suite on $store"
  start=$(date +%s)
  SECRETSTORE_IAC_STORE=$store node node_modules/jest/bin/jest.js -c jest.store.config.js --runInBand "${report[@]}" "$@" || status=1
  echo "test-store: store suite on $store done in $(($(date +%s) - start)) s"
done
exit $status
