# frozen_string_literal: true

# An ordinary mkmf extconf: nothing in it is about fuzzing. The sanitizer
# flags come from `ruzzy build-ext` (see docs/c-extensions.md).
require "mkmf"

create_makefile("record_decoder/record_decoder")
