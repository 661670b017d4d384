#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the main job — the
# conformance suite on the built-in backends at level 1.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
exec build/numref conform --backend all --level 1
