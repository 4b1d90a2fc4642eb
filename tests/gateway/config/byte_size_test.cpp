// Byte counts: the units operators write, the typos that must not pass, and
// format_byte_size as parse_byte_size's inverse.
#include "gateway/config/byte_size.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "base/error.h"

namespace kvgate::config {
namespace {

TEST(ByteSize, ReadsUnits) {
  EXPECT_EQ(parse_byte_size("0"), 0);
  EXPECT_EQ(parse_byte_size("1048576"), 1048576);
  EXPECT_EQ(parse_byte_size("16KiB"), 16384);
  EXPECT_EQ(parse_byte_size("16 KiB"), 16384);
  EXPECT_EQ(parse_byte_size("4MiB"), 4 << 20);
  EXPECT_EQ(parse_byte_size("4GiB"), int64_t{4} << 30);
  EXPECT_EQ(parse_byte_size("2GB"), 2'000'000'000);
  EXPECT_EQ(parse_byte_size("1.5KiB"), 1536);
  EXPECT_EQ(parse_byte_size("512B"), 512);
  EXPECT_EQ(parse_byte_size("1TiB"), int64_t{1} << 40);
}

TEST(ByteSize, WholeCountsStayExactPastDoublePrecision) {
  EXPECT_EQ(parse_byte_size("9007199254740993"), 9007199254740993);
  EXPECT_EQ(parse_byte_size(std::to_string(std::numeric_limits<int64_t>::max())),
            std::numeric_limits<int64_t>::max());
}

TEST(ByteSize, RefusesWhatIsNotACount) {
  for (const char* bad : {"", "lots", "4 gigs", "4gib", "-1", "-1KiB", "nan", "inf", "1.5", "4GiB ", " 4GiB",
                          "4  GiB", "0x10", "9223372036854775808", "9000000TiB", "1e30"}) {
    EXPECT_THROW(parse_byte_size(bad), Error) << "'" << bad << "'";
  }
  try {
    parse_byte_size("4 gigs");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'4 gigs' is not a byte count"), std::string::npos) << e.what();
  }
}

TEST(ByteSize, FormatsInTheLargestExactUnitAndReadsBack) {
  EXPECT_EQ(format_byte_size(0), "0");
  EXPECT_EQ(format_byte_size(1000), "1000");
  EXPECT_EQ(format_byte_size(16384), "16KiB");
  EXPECT_EQ(format_byte_size(int64_t{1} << 30), "1GiB");
  EXPECT_EQ(format_byte_size(int64_t{3} << 40), "3TiB");
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{1023}, int64_t{1024}, int64_t{1536}, int64_t{5} << 20,
                    int64_t{9007199254740993}, std::numeric_limits<int64_t>::max()})
    EXPECT_EQ(parse_byte_size(format_byte_size(n)), n) << n;
}

TEST(ByteSize, ReadableSizesRoundToOneDecimalInTheLargestUnitReached) {
  EXPECT_EQ(readable_byte_size(0), "0 B");
  EXPECT_EQ(readable_byte_size(1023), "1023 B");
  EXPECT_EQ(readable_byte_size(1024), "1.0 KiB");
  EXPECT_EQ(readable_byte_size(int64_t{640} << 20), "640.0 MiB");
  EXPECT_EQ(readable_byte_size((int64_t{23} << 30) / 10), "2.3 GiB");
  EXPECT_EQ(readable_byte_size(int64_t{5} << 50), "5120.0 TiB");
}

}  // namespace
}  // namespace kvgate::config
