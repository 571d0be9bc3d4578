#!/usr/bin/env bash
# Lock the Python environment of the tests and benchmarks: resolve
# tools/requirements-test.in (what the suite needs, and why) with the
# Python the environment is made from (Debian's /usr/bin/python3), and
# write every package it installs at its exact version to
# tools/requirements-test.txt, the file set-up installs. Run it after
# changing the .in file, check the suite passes, and commit both files.
#
#   bash tools/lock-test-env.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python="${PYTHON:-/usr/bin/python3}"
tmp="$(mktemp -d -t rdarrow-lock.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --upgrade pip
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --dry-run \
  --ignore-installed --report "$tmp/report.json" -r tools/requirements-test.in
"$tmp/venv/bin/python" - "$tmp/report.json" "$("$python" --version)" >tools/requirements-test.txt <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
pins = sorted(
    ((i["metadata"]["name"], i["metadata"]["version"]) for i in report["install"]),
    key=lambda p: p[0].lower(),
)
print("# The locked Python environment of the tests and benchmarks: every")
print("# package at the exact version it was resolved to, made by")
print("# `bash tools/lock-test-env.sh` from tools/requirements-test.in")
print(f"# ({sys.argv[2]}, Linux x86_64). Do not edit by hand.")
for name, version in pins:
    print(f"{name}=={version}")
PY
echo "==> tools/requirements-test.txt: $(grep -vc '^#' tools/requirements-test.txt) packages"
