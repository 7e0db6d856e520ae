# frozen_string_literal: true

require_relative "../test_helper"

# `ruzzy build-ext`: what it builds is found by `ruzzy --sanitizer=address`
# (the planted bugs of test/fixtures/planted_bugs, in C and C++, at the
# default optimisation level), it installs into a gem home, uses the
# builder's flags under OSS-Fuzz, and refuses what would fuzz blind.
class TestBuildExt < Minitest::Test
  PLANTED = File.join(FIXTURES, "planted_bugs")
  # routine keyword => [ASan's name for the bug, the function it is in]
  BUGS = {
    "HEAP" => %w[heap-buffer-overflow heap_buffer_overflow],
    "FREE" => %w[heap-use-after-free use_after_free],
    "STAK" => %w[stack-buffer-overflow stack_buffer_overflow],
    "DFRE" => ["attempting double-free", "double_free"]
  }.freeze

  def setup
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
  end

  def test_every_planted_bug_is_found_in_c_and_cxx_at_the_default_level
    in_tmpdir do |dir|
      project = planted_copy(dir)
      built = ruzzy("build-ext", project)
      assert_exit 0, built
      assert_match(/building with \S*clang .*-O2, address$/, built.stderr)
      assert_match(%r{built #{Regexp.escape(project)}/lib/planted_bugs/planted_cxx\.so$}, built.stderr)
      assert_match(/checked 2 shared object\(s\): clang, address sanitizer, SanitizerCoverage/, built.stderr)
      unsanitized = ruzzy("-I", "lib", write_harness(project, "require 'planted_bugs'\nRuzzy.fuzz(->(data) { nil })"),
                          "-runs=1", chdir: project)
      assert_exit 1, unsanitized
      assert_match(/that extension was built for fuzzing under a sanitizer: run with --sanitizer=address/,
                   unsanitized.stderr)
      { "c" => "planted_c.c", "cxx" => "planted_cxx.cpp" }.each do |language, source|
        BUGS.each do |keyword, (report, function)|
          harness = write_harness(project, "require 'planted_bugs'\n" \
                                           "Ruzzy.fuzz(->(data) { PlantedBugs.#{language}('#{keyword}' + data); nil })")
          result = ruzzy("--sanitizer=address", "-I", "lib", harness, "-seed=1", "-runs=#{runs(500_000)}",
                         chdir: project)
          assert_exit 77, result
          assert_match(/ERROR: AddressSanitizer: #{report}/, result.stderr, "#{language} #{keyword}")
          assert_match(/#\d+ 0x\h+ in .*\b#{function}\b.* \S*#{Regexp.escape(source)}:\d+/, result.stderr,
                       "#{language} #{keyword}: the frame of the planted bug")
          refute_match(/WARNING: ruzzy: .*not compiled|no SanitizerCoverage/, result.stderr)
        end
      end
    end
  end

  def test_a_project_installs_into_a_gem_home_and_fuzzes_from_there
    in_tmpdir do |dir|
      project = planted_copy(dir)
      built = ruzzy("build-ext", project, "--install-dir", "vendor/fuzz", chdir: dir)
      assert_exit 0, built
      assert_match(%r{installed planted_bugs-0\.1\.0 into #{Regexp.escape(dir)}/vendor/fuzz$}, built.stderr)
      log = File.read(Dir.glob(File.join(dir, "vendor/fuzz/extensions/*/*/planted_bugs-0.1.0/gem_make.out")).first)
      assert_match(/^\S*clang\+\+ .* -O2 .*-fsanitize=address -fsanitize=fuzzer-no-link .*-c planted_cxx\.cpp$/, log)
      harness = write_harness(dir, "require 'planted_bugs'\nRuzzy.fuzz(->(data) { PlantedBugs.c('HEAP' + data); nil })")
      gem_path = [File.join(dir, "vendor", "fuzz"), *Gem.path].join(":")
      result = ruzzy("--sanitizer=address", harness, "-seed=1", "-runs=#{runs(500_000)}",
                     chdir: dir, env: { "GEM_PATH" => gem_path })
      assert_exit 77, result
      assert_match(/ERROR: AddressSanitizer: heap-buffer-overflow/, result.stderr)
    end
  end

  # A gemspec dependency installed by a Debian package (ruby-minitest puts
  # minitest in /usr/share/rubygems-integration/all, on Ruby's default gem
  # path) is found: `gem install --install-dir DIR` looked for it only in
  # .gem files and remote sources ("Could not find a valid gem").
  def test_a_dependency_installed_by_debian_is_found_when_installing_into_a_gem_home
    packaged = Gem::Specification.find_all_by_name("minitest").find do |spec|
      spec.base_dir.start_with?("/usr/share/rubygems-integration", "/usr/lib/ruby/vendor_ruby")
    end
    prerequisite! packaged, "minitest from Debian's ruby-minitest (apt-get install ruby-minitest)"
    in_tmpdir do |dir|
      project = planted_copy(dir)
      gemspec = File.join(project, "planted_bugs.gemspec")
      dependency = "  spec.add_dependency \"minitest\", \"= #{packaged.version}\"\n"
      File.write(gemspec, File.read(gemspec).sub(/^end\n\z/) { "#{dependency}end\n" })
      built = ruzzy("build-ext", project, "--install-dir", "home", chdir: dir)
      assert_exit 0, built
      assert_match(%r{installed planted_bugs-0\.1\.0 into #{Regexp.escape(dir)}/home$}, built.stderr)
      assert_empty Dir.glob(File.join(dir, "home", "gems", "minitest-*")), "the installed minitest was used"
      harness = write_harness(dir, <<~RUBY)
        require "planted_bugs"
        warn "minitest from \#{Gem.loaded_specs.fetch("minitest").base_dir}"
        Ruzzy.fuzz(->(data) { PlantedBugs.c("HEAP" + data); nil })
      RUBY
      # GEM_PATH=DIR: is DIR and Ruby's default gem path, Debian's gems
      # included; activating planted_bugs activates its dependency.
      result = ruzzy("--sanitizer=address", harness, "-seed=1", "-runs=#{runs(500_000)}",
                     chdir: dir, env: { "GEM_PATH" => "#{File.join(dir, "home")}:" })
      assert_exit 77, result
      assert_match(/^minitest from #{Regexp.escape(packaged.base_dir)}$/, result.stderr)
      assert_match(/ERROR: AddressSanitizer: heap-buffer-overflow/, result.stderr)
    end
  end

  def test_a_gem_file_installs_with_gem_install
    in_tmpdir do |dir|
      project = planted_copy(dir)
      assert_exit 0, run_command("gem", "build", "planted_bugs.gemspec", chdir: project)
      built = ruzzy("build-ext", "-O", "1", File.join(project, "planted_bugs-0.1.0.gem"), "--install-dir=home",
                    chdir: dir)
      assert_exit 0, built
      assert_match(/-O1, address$/, built.stderr)
      assert_equal %w[planted_c.so planted_cxx.so],
                   Dir.glob(File.join(dir, "home/extensions/**/*.so")).map { |path| File.basename(path) }.sort
    end
  end

  # OSS-Fuzz's and ClusterFuzzLite's compile step: CFLAGS asks for a
  # sanitizer but not for libFuzzer's coverage, which build-ext adds (the
  # check would fail without it).
  def test_the_builders_flags_are_used_with_coverage_added
    in_tmpdir do |dir|
      project = planted_copy(dir)
      built = builder_build(project, "address",
                            "-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address " \
                            "-fsanitize-address-use-after-scope")
      assert_exit 0, built
      assert_match(/the builder's compiler and flags \(address\)/, built.stderr)
      assert_match(/checked 2 shared object\(s\)/, built.stderr)
    end
  end

  # OSS-Fuzz's coverage builds: the builder's flags as they are, no
  # libFuzzer coverage (nothing preloads libFuzzer there), nothing to check.
  def test_a_coverage_build_keeps_the_builders_flags
    in_tmpdir do |dir|
      project = planted_copy(dir)
      built = builder_build(project, "coverage", "-O1 -fno-omit-frame-pointer -gline-tables-only")
      assert_exit 0, built
      assert_match(/the builder's compiler and flags \(no fuzzing sanitizer\)/, built.stderr)
      assert_match(/built 2 shared object\(s\) for a build without a fuzzing sanitizer: nothing to check/, built.stderr)
      symbols = run_command("nm", "-D", File.join(project, "lib/planted_bugs/planted_c.so")).stdout
      refute_match(/__sanitizer_cov_/, symbols)
      assert_match(/ T Init_planted_c$/, symbols, "nm read the file")
    end
  end

  def test_a_gcc_build_fails_the_check_naming_the_shared_object
    in_tmpdir do |dir|
      project = one_file_project(dir, "override CC = gcc", "override CFLAGS := -O2 -g -fPIC -fsanitize=address")
      built = ruzzy("build-ext", project)
      assert_exit 1, built
      so = Regexp.escape("#{project}/lib/plain/plain.so")
      assert_match(/^  #{so}: not compiled by clang \(by GCC\); .*no SanitizerCoverage/, built.stderr)
    end
  end

  def test_a_build_without_the_coverage_flag_fails_the_check
    in_tmpdir do |dir|
      project = one_file_project(dir, "override CFLAGS := $(filter-out -fsanitize=fuzzer-no-link,$(CFLAGS))")
      built = ruzzy("build-ext", project)
      assert_exit 1, built
      so = Regexp.escape("#{project}/lib/plain/plain.so")
      assert_match(/^  #{so}: no SanitizerCoverage \(-fsanitize=fuzzer-no-link\)$/, built.stderr)
      assert_match(/fuzzed blind or unchecked/, built.stderr)
    end
  end

  def test_what_cannot_be_built_is_said
    in_tmpdir do |dir|
      assert_exit 2, ruzzy("build-ext")
      assert_match(/build-ext: -O takes one of 0, 1, 2, 3, s, g, got "9"/, ruzzy("build-ext", "-O", "9", dir).stderr)
      missing = ruzzy("build-ext", "./no-such-gem.gem")
      assert_exit 2, missing
      assert_match(%r{no such file or directory: \./no-such-gem\.gem}, missing.stderr)
      empty = ruzzy("build-ext", dir)
      assert_exit 1, empty
      assert_match(%r{has no extconf\.rb \(in ext/ or at the top\): nothing to compile}, empty.stderr)
      no_spec = ruzzy("build-ext", dir, "--install-dir", File.join(dir, "home"))
      assert_exit 1, no_spec
      assert_match(/has no gemspec to build a gem from \(leave out --install-dir/, no_spec.stderr)
    end
  end

  def test_an_extension_not_built_for_fuzzing_is_named_under_the_sanitizer
    in_tmpdir do |dir|
      build_plain_extension(dir)
      write_harness(dir, "require_relative 'faults'\nRuzzy.fuzz(->(data) { Faults.ubsan(data); nil })")
      warned = ruzzy("--sanitizer=address", "harness.rb", "-runs=1", chdir: dir)
      assert_exit 0, warned
      so = Regexp.escape("#{File.realpath(dir)}/faults.so")
      assert_match(/^WARNING: ruzzy: #{so}: .*no AddressSanitizer instrumentation .*rebuild it with `ruzzy build-ext`/,
                   warned.stderr)
      refute_match(/WARNING: ruzzy:/, ruzzy("harness.rb", "-runs=1", chdir: dir).stderr, "no sanitizer, no warning")
    end
  end

  # The preload answers 1-byte comparisons of C code only when the value
  # profile is on (their only use): with -use_value_profile=1 they add
  # features, without it they cost a return.
  def test_one_byte_comparisons_feed_the_value_profile_when_it_is_on
    in_tmpdir do |dir|
      source = File.join(dir, "bytes.c")
      File.write(source, <<~C)
        #include <ruby.h>
        static VALUE bytes_check(VALUE self, VALUE data) {
          const unsigned char *p = (const unsigned char *)RSTRING_PTR(data);
          return p[0] == 0x5A ? Qtrue : Qfalse;
        }
        void Init_bytes(void) { rb_define_module_function(rb_define_module("Bytes"), "check", bytes_check, 1); }
      C
      build_c_extension(dir, source, sanitize: "address")
      write_harness(dir, "require_relative 'bytes'\nRuzzy.fuzz(->(data) { Bytes.check(data); nil })")
      features = [0, 1].to_h do |on|
        result = ruzzy("--sanitizer=address", "--no-coverage", "harness.rb", "-seed=1", "-runs=3000",
                       "-use_value_profile=#{on}", chdir: dir)
        assert_exit 0, result
        [on, Integer(result.stderr.scan(/ ft: (\d+)/).flatten.last)]
      end
      assert_operator features[1], :>, features[0] + 3, "the comparison's Hamming and absolute distances"
    end
  end

  private

  # `ruzzy build-ext PROJECT` in an OSS-Fuzz builder's environment: its
  # compilers, SANITIZER and the same CFLAGS and CXXFLAGS.
  def builder_build(project, sanitizer, flags)
    ruzzy("build-ext", project, env: { "CC" => "clang", "CXX" => "clang++", "CFLAGS" => flags,
                                       "CXXFLAGS" => flags, "SANITIZER" => sanitizer })
  end

  def planted_copy(dir)
    FileUtils.cp_r(PLANTED, dir)
    File.join(dir, "planted_bugs")
  end

  # A project with one C extension whose extconf.rb appends +lines+ to the
  # Makefile (as a hand-written build would override the flags).
  def one_file_project(dir, *lines)
    project = File.join(dir, "plain")
    ext = File.join(project, "ext", "plain")
    FileUtils.mkdir_p(ext)
    File.write(File.join(ext, "plain.c"), <<~C)
      #include <ruby.h>
      static VALUE plain_length(VALUE self, VALUE data) { (void)self; return LONG2NUM(RSTRING_LEN(data) > 3 ? 1 : 0); }
      void Init_plain(void) { rb_define_module_function(rb_define_module("Plain"), "length", plain_length, 1); }
    C
    File.write(File.join(ext, "extconf.rb"), <<~RUBY)
      require "mkmf"
      create_makefile("plain/plain")
      File.open("Makefile", "a") { |makefile| makefile.puts(#{lines.inspect}) }
    RUBY
    project
  end
end
