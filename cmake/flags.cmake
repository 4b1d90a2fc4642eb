# Compiler flags shared by every kvgate target (applied through kvgate_options).
add_library(kvgate_options INTERFACE)
target_compile_options(kvgate_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers
  # x86-64-v3 (AVX2, FMA, F16C) is the baseline the CPU kernels are written for.
  -march=x86-64-v3)
# Clang checks the locking that GUARDED_BY / REQUIRES annotations declare.
# Code without annotations gives no warnings, so it is safe under -Werror.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(kvgate_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wthread-safety>)
endif()
if(KVGATE_WERROR)
  target_compile_options(kvgate_options INTERFACE -Werror)
endif()
# The linker: lld for the clang builds (the sanitizer and fuzz builds),
# where it is installed (ops/deps installs lld). GNU ld spends seconds on
# each test binary there (about 2 s CPU, 6-7 s wall, for kvgate and each
# gateway suite under ASan); lld does the same links in about 0.5 s CPU,
# 1.4 s wall (docs/benchmarks.md, "The test run"). Not with GCC: lld 14
# linking GCC 12's -O3 objects broke unwinding out of a function's .cold
# part (an exception thrown there called std::terminate instead of reaching
# its handler: JinjaLimits.ValuesNestBoundedly in the Release suites).
# -DKVGATE_LINKER=default keeps the compiler's own linker, =lld forces lld.
set(KVGATE_LINKER auto CACHE STRING "auto (lld with clang where installed), lld, or default (the compiler's own)")
find_program(KVGATE_LLD NAMES ld.lld ld.lld-14)
if(KVGATE_LINKER STREQUAL "lld" OR (KVGATE_LINKER STREQUAL "auto" AND KVGATE_LLD AND CMAKE_CXX_COMPILER_ID MATCHES "Clang"))
  # Only CXX and C links: nvcc's device link (if any) keeps its own.
  add_link_options($<$<LINK_LANGUAGE:CXX,C>:-fuse-ld=lld>)
endif()
# The optimisation level comes from the build type alone (Release: -O3,
# RelWithDebInfo: -O2), never from kvgate_options, so that the test suites
# can choose their own (tests/CMakeLists.txt).

# ThreadSanitizer (clang): its own build, since it cannot be combined with
# AddressSanitizer. ops/test runs the threaded suites in it.
option(KVGATE_TSAN "Build with ThreadSanitizer (clang)" OFF)
if(KVGATE_TSAN AND KVGATE_SANITIZE)
  message(FATAL_ERROR "KVGATE_TSAN and KVGATE_SANITIZE are exclusive: ThreadSanitizer cannot run with AddressSanitizer")
endif()
if(KVGATE_TSAN AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "KVGATE_TSAN needs clang")
endif()

# check_invariants() after every mutating BlockPool call and every
# Scheduler step: on in the sanitizer builds, off in Release (it is linear in
# the pool size).
if(KVGATE_SANITIZE OR KVGATE_TSAN)
  set(KVGATE_CHECK_INVARIANTS_DEFAULT ON)
else()
  set(KVGATE_CHECK_INVARIANTS_DEFAULT OFF)
endif()
option(KVGATE_CHECK_INVARIANTS "Check cache and scheduler invariants after every mutation" ${KVGATE_CHECK_INVARIANTS_DEFAULT})
if(KVGATE_CHECK_INVARIANTS)
  target_compile_definitions(kvgate_options INTERFACE KVGATE_CHECK_INVARIANTS)
endif()

if(KVGATE_SANITIZE)
  set(KVGATE_SAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  # Line tables are all a sanitizer report needs (function, file, line, inlined
  # frames); full -g debug info made each Beast-heavy object about 10% slower to build.
  target_compile_options(kvgate_options INTERFACE ${KVGATE_SAN_FLAGS} -gline-tables-only)
  target_link_options(kvgate_options INTERFACE ${KVGATE_SAN_FLAGS})
endif()

if(KVGATE_TSAN)
  set(KVGATE_TSAN_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
  target_compile_options(kvgate_options INTERFACE ${KVGATE_TSAN_FLAGS} -gline-tables-only)
  target_link_options(kvgate_options INTERFACE ${KVGATE_TSAN_FLAGS})
endif()

if(KVGATE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "KVGATE_FUZZ needs clang (libFuzzer)")
  endif()
  # Coverage instrumentation (-fsanitize=fuzzer-no-link) goes only on the
  # parser libraries the fuzz targets name, and tests/fuzz/CMakeLists.txt
  # adds it there: only a fuzz process reads the counters, so in the suites, the
  # server the e2e tests start and kvgatectl it was compile time (a fifth of
  # kvgatectl's first unity batch) and a hook call at every comparison.
endif()

# kvgate_io_code(target...): an executable that waits on its user and shares
# no code with the server (kvgatectl) compiles at -O0 in the sanitizer
# builds, as the suites do. Only such a target: an inline or template
# function (Beast's, the standard library's) compiled at -O0 in one object
# may be the copy the linker keeps for the server too (the kvgate binary's
# subcommands at -O0 made the route front four times slower under ASan:
# E2E.cluster 265 s against 64 s). kvgatectl's first unity batch under ASan:
# 66.7 s at -O2, 68.2 s at -O1, 27.6 s at -O0 (clang 14, this machine).
# Release builds keep the build type's level.
function(kvgate_io_code)
  if(KVGATE_SANITIZE OR KVGATE_TSAN)
    foreach(target IN LISTS ARGN)
      target_compile_options(${target} PRIVATE -O0)
    endforeach()
  endif()
endfunction()
