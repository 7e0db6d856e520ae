#!/bin/bash -eu
# The project keeps its fuzz targets and their build script in its own repository.
exec "$SRC/oj/fuzz/build.sh"
