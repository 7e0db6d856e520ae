#!/usr/bin/env bash
# Builds the record_decoder extension with AddressSanitizer and libFuzzer's
# coverage instrumentation into build/, the way `gem install` would build a
# third-party gem with the environment from docs/c-extensions.md.
set -euo pipefail
cd "$(dirname "$0")"
rm -rf build && mkdir -p build/record_decoder
cd build
export CC=clang CXX=clang++ LDSHARED="clang -shared" LDSHAREDXX="clang++ -shared"
export CFLAGS="-O2 -g -fsanitize=address,fuzzer-no-link -fno-omit-frame-pointer -fno-common -fPIC"
export CXXFLAGS="$CFLAGS"
ruby ../ext/record_decoder/extconf.rb >/dev/null
make --environment-overrides V=0 >/dev/null
mv record_decoder.so record_decoder/
echo "built $(pwd)/record_decoder/record_decoder.so"
