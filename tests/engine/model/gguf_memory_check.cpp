// Heap use of the GGUF parser, measured by replacing the global operator new.
//
// Its own executable (not a *_test.cpp of the model suite), so the counting
// allocator is linked into nothing else. The replacement calls malloc, which
// ASan still intercepts.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<size_t> g_bytes{0};

void* counted_alloc(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_bytes.fetch_add(n, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}

void* counted_alloc_aligned(size_t n, std::align_val_t al) {
  if (g_counting.load(std::memory_order_relaxed)) g_bytes.fetch_add(n, std::memory_order_relaxed);
  const size_t a = std::max(static_cast<size_t>(al), sizeof(void*));
  void* p = nullptr;
  if (posix_memalign(&p, a, n ? n : 1) == 0) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try { return counted_alloc(n); } catch (...) { return nullptr; }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try { return counted_alloc(n); } catch (...) { return nullptr; }
}
void* operator new(size_t n, std::align_val_t al) { return counted_alloc_aligned(n, al); }
void* operator new[](size_t n, std::align_val_t al) { return counted_alloc_aligned(n, al); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace kvgate {
namespace {

// Heap bytes allocated while `f` runs (frees are not subtracted).
template <typename F>
size_t heap_bytes_during(F&& f) {
  g_bytes = 0;
  g_counting = true;
  f();
  g_counting = false;
  return g_bytes;
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/kvgate-" + std::to_string(getpid()) + "-" + name;
}

// A file whose metadata is one array of `n` elements of `type`, element i
// being value(i).
template <typename V>
std::string write_array_file(const std::string& name, GgufType type, size_t n, V value) {
  GgufArray a{type, {}};
  a.items.reserve(n);
  for (size_t i = 0; i < n; ++i) a.items.push_back(value(i));
  GgufWriter w;
  w.set("big", {GgufType::ARRAY, std::move(a)});
  const std::string path = temp_path(name);
  w.write(path);
  return path;
}

constexpr size_t kElems = size_t{1} << 20;

TEST(GgufMemory, CountingAllocatorSeesParserAllocations) {
  // The measurement itself works: a std::string of 1 MiB is seen.
  const size_t bytes = heap_bytes_during([] { std::string s(kElems, 'x'); });
  EXPECT_GE(bytes, kElems);
}

// A hostile (or merely large) file must not make the parser allocate many
// times its own size: an array of one-byte elements costs about one byte an
// element, not a whole metadata value per element.
TEST(GgufMemory, OneByteArraysAreStoredCompactly) {
  struct Case {
    const char* name;
    GgufType type;
  };
  for (const Case& c : {Case{"u8", GgufType::UINT8}, Case{"i8", GgufType::INT8}, Case{"bool", GgufType::BOOL}}) {
    SCOPED_TRACE(c.name);
    const std::string path = write_array_file(std::string(c.name) + ".gguf", c.type, kElems, [&](size_t i) -> GgufValue {
      switch (c.type) {
        case GgufType::UINT8: return {c.type, uint64_t{i % 251}};
        case GgufType::INT8: return {c.type, int64_t(i % 251) - 125};
        default: return {c.type, i % 3 == 0};
      }
    });
    std::unique_ptr<GgufFile> f;
    const size_t bytes = heap_bytes_during([&] { f = GgufFile::open(path); });
    std::remove(path.c_str());
    RecordProperty(std::string(c.name) + "_heap_bytes", std::to_string(bytes));
    EXPECT_LT(bytes, 4 * kElems) << bytes << " heap bytes to parse " << kElems << " one-byte elements";

    const GgufArray& a = f->get_array("big");
    EXPECT_EQ(a.elem_type, c.type);
    ASSERT_EQ(a.size(), kElems);
    for (size_t i : {size_t{0}, size_t{1}, size_t{2}, size_t{250}, size_t{251}, kElems - 1}) {
      const GgufValue v = a.at(i);
      EXPECT_EQ(v.type, c.type);
      switch (c.type) {
        case GgufType::UINT8: EXPECT_EQ(std::get<uint64_t>(v.v), i % 251) << i; break;
        case GgufType::INT8: EXPECT_EQ(std::get<int64_t>(v.v), int64_t(i % 251) - 125) << i; break;
        default: EXPECT_EQ(std::get<bool>(v.v), i % 3 == 0) << i; break;
      }
    }
  }
}

// Wider scalars too cost their encoded width, not a metadata value each.
TEST(GgufMemory, WideScalarArraysAreStoredCompactly) {
  const std::string path = write_array_file("f32.gguf", GgufType::FLOAT32, kElems,
                                            [](size_t i) -> GgufValue { return {GgufType::FLOAT32, double(float(i) * 0.5f)}; });
  std::unique_ptr<GgufFile> f;
  const size_t bytes = heap_bytes_during([&] { f = GgufFile::open(path); });
  std::remove(path.c_str());
  RecordProperty("f32_heap_bytes", std::to_string(bytes));
  EXPECT_LT(bytes, 4 * kElems + kElems) << bytes << " heap bytes to parse " << kElems << " float32 elements";
  const GgufArray& a = f->get_array("big");
  ASSERT_EQ(a.size(), kElems);
  EXPECT_EQ(std::get<double>(a.at(7).v), 3.5);
  EXPECT_EQ(std::get<double>(a.at(kElems - 1).v), double(float(kElems - 1) * 0.5f));
}

}  // namespace
}  // namespace kvgate
