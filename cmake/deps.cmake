# Third-party libraries, all from Debian packages installed by ops/deps.
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)

# OpenBLAS, the OpenMP build: it shares libgomp's thread pool with our own
# kernels, so the two never oversubscribe the cores.
find_library(OPENBLAS_LIB NAMES openblas
  PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp NO_DEFAULT_PATH REQUIRED)
find_path(OPENBLAS_INCLUDE cblas.h
  PATHS /usr/include/x86_64-linux-gnu/openblas-openmp NO_DEFAULT_PATH REQUIRED)
add_library(kvgate_blas INTERFACE)
target_link_libraries(kvgate_blas INTERFACE ${OPENBLAS_LIB} OpenMP::OpenMP_CXX)
target_include_directories(kvgate_blas SYSTEM INTERFACE ${OPENBLAS_INCLUDE})

find_path(XXHASH_INCLUDE xxhash.h REQUIRED)
find_library(XXHASH_LIB xxhash REQUIRED)
add_library(kvgate_xxhash INTERFACE)
target_include_directories(kvgate_xxhash SYSTEM INTERFACE ${XXHASH_INCLUDE})
target_link_libraries(kvgate_xxhash INTERFACE ${XXHASH_LIB})

find_package(RocksDB QUIET CONFIG)
if(NOT TARGET RocksDB::rocksdb)
  find_library(ROCKSDB_LIB rocksdb REQUIRED)
  add_library(RocksDB::rocksdb UNKNOWN IMPORTED)
  set_target_properties(RocksDB::rocksdb PROPERTIES IMPORTED_LOCATION ${ROCKSDB_LIB})
endif()

find_package(OpenSSL REQUIRED)
find_package(tomlplusplus REQUIRED)   # the server's config file
# curl and the openssl tool: the server tests check one real client against
# the HTTPS server and the certificate's fingerprint against the tool's
# (those tests are left out where one is missing).
find_program(KVGATE_CURL curl)
find_program(KVGATE_OPENSSL openssl)
find_package(CLI11 CONFIG REQUIRED)
find_package(Boost 1.81 REQUIRED COMPONENTS json)

if(KVGATE_TESTS)
  find_package(GTest REQUIRED)
endif()

# PCRE2 (8-bit, UTF + Unicode properties, JIT): the byte-level BPE pre-tokenizer regexes.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
# ZeroMQ (cppzmq is its header): block events from the replicas to the route front.
pkg_check_modules(ZMQ REQUIRED IMPORTED_TARGET GLOBAL libzmq)
add_library(kvgate_pcre2 INTERFACE)
target_link_libraries(kvgate_pcre2 INTERFACE PkgConfig::PCRE2)
