// The response bytes, SSE framing and the error shape, byte for byte.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "gateway/server/error_body.h"
#include "gateway/server/sse.h"
#include "gateway/server/wire_format.h"

namespace kvgate::server {
namespace {

TEST(WireFormat, HeadWithLengthDropsServerOwnedHeaders) {
  const std::string head = serialize_head(200, {{"Content-Type", "application/json"}, {"content-length", "99"},
                                                {"Connection", "upgrade"}, {"Transfer-Encoding", "gzip"}},
                                          Framing::kLength, 12, true, 11);
  EXPECT_EQ(head, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n");
}

TEST(WireFormat, ChunkedHeadAndClose) {
  EXPECT_EQ(serialize_head(200, {}, Framing::kChunked, 0, false, 11),
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(serialize_head(204, {}, Framing::kNone, 0, true, 11), "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(serialize_head(431, {}, Framing::kLength, 0, true, 10),
            "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n");
}

TEST(WireFormat, Chunks) {
  EXPECT_EQ(chunk("hello"), "5\r\nhello\r\n");
  EXPECT_EQ(chunk(std::string(26, 'x')), "1a\r\n" + std::string(26, 'x') + "\r\n");
  EXPECT_EQ(kLastChunk, "0\r\n\r\n");
}

TEST(WireFormat, HeaderChecksRefuseSplitting) {
  EXPECT_TRUE(valid_headers({{"X-Ok", "a b\tc"}}));
  EXPECT_FALSE(valid_headers({{"X-Bad", "a\r\nInjected: yes"}}));
  EXPECT_FALSE(valid_headers({{"X-Bad", std::string("a\0b", 3)}}));
  EXPECT_FALSE(valid_headers({{"Bad Name", "v"}}));
  EXPECT_FALSE(valid_headers({{"", "v"}}));
  EXPECT_FALSE(valid_headers({{"X:Y", "v"}}));
}

TEST(WireFormat, StatusRules) {
  EXPECT_TRUE(valid_final_status(200));
  EXPECT_TRUE(valid_final_status(599));
  EXPECT_FALSE(valid_final_status(100));
  EXPECT_FALSE(valid_final_status(600));
  EXPECT_FALSE(status_has_body(204));
  EXPECT_FALSE(status_has_body(304));
  EXPECT_TRUE(status_has_body(200));
}

TEST(Sse, DataFrames) {
  EXPECT_EQ(sse_data(R"({"a":1})"), "data: {\"a\":1}\n\n");
  EXPECT_EQ(sse_data("one\ntwo"), "data: one\ndata: two\n\n");
  EXPECT_EQ(sse_data("one\r\ntwo\rthree"), "data: one\ndata: two\ndata: three\n\n");
  EXPECT_EQ(sse_data(""), "data: \n\n");
  EXPECT_EQ(kSseDone, "data: [DONE]\n\n");
  const HttpHeaders h = sse_headers();
  EXPECT_EQ(find_header(h, "content-type").value_or(""), "text/event-stream");
  EXPECT_EQ(find_header(h, "Cache-Control").value_or(""), "no-cache");
}

TEST(ErrorBody, OpenAiShape) {
  const boost::json::value v = boost::json::parse(error_body("bad \"thing\"\n", "invalid_request_error", "x_code"));
  const auto& e = v.at("error").as_object();
  EXPECT_EQ(e.at("message").as_string(), "bad \"thing\"\n");
  EXPECT_EQ(e.at("type").as_string(), "invalid_request_error");
  EXPECT_TRUE(e.at("param").is_null());
  EXPECT_EQ(e.at("code").as_string(), "x_code");
  EXPECT_EQ(error_type_for(503), "server_error");
  EXPECT_EQ(error_type_for(413), "invalid_request_error");
}

}  // namespace
}  // namespace kvgate::server
