#!/usr/bin/env bash
# Regenerate tests/fuzz/corpus/fuzz_link/ from a real kernel: the dumps are
# taken in an anonymous network namespace (unshare -n), which disappears
# with the script; the host's network is never touched.  Needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tests/fuzz/corpus/fuzz_link
exec unshare -n python3 tests/fuzz/capture_link_corpus.py tests/fuzz/corpus/fuzz_link
