#!/bin/bash -eu
# Builds the fuzz targets in OSS-Fuzz's and ClusterFuzzLite's base-builder-ruby image: oj's C
# extension with the platform's compiler and flags ($CC, $CFLAGS for its $SANITIZER; ruzzy
# build-ext adds libFuzzer's coverage and checks the result), installed into the image's
# GEM_HOME ($OUT/fuzz-gem), then one target per fuzz/fuzz_*.rb.
cd "$SRC/oj"
export PATH=/install/ruzzy/bin:$PATH
gem build oj.gemspec
ruzzy build-ext oj-*.gem
ruzzy oss-fuzz-build fuzz/fuzz_*.rb --dict=fuzz/json.dict
