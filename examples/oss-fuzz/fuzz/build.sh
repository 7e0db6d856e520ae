#!/bin/bash -eu
# Builds the fuzz targets in OSS-Fuzz's and ClusterFuzzLite's base-builder-ruby image: oj's C
# extension with the platform's compiler and flags ($CC, $CFLAGS for its $SANITIZER), installed
# into the image's GEM_HOME ($OUT/fuzz-gem), then one target per fuzz/fuzz_*.rb.
cd "$SRC/oj"
gem build oj.gemspec
# mkmf's Makefile names Ruby's own compiler: --environment-overrides makes $CC and the flags
# win (replacing the Makefile's, so -fPIC is added back), LDSHARED links with the same
# compiler. -fsanitize=fuzzer-no-link gives libFuzzer the C code's coverage.
export CFLAGS="$CFLAGS -fsanitize=fuzzer-no-link -fPIC" CXXFLAGS="$CXXFLAGS -fsanitize=fuzzer-no-link -fPIC"
export LDSHARED="$CC -shared" LDSHAREDXX="$CXX -shared"
MAKE="make --environment-overrides" gem install --local --no-document oj-*.gem
export PATH=/install/ruzzy/bin:$PATH
ruzzy oss-fuzz-build fuzz/fuzz_*.rb --dict=fuzz/json.dict
