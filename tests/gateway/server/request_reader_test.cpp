// Request reading without a socket: the limits as the parser applies them,
// the answer each failure gets, and the conversion to HttpRequest.
#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>

#include "gateway/server/request_reader.h"

namespace kvgate::server {
namespace {

namespace http = boost::beast::http;

// Parses `bytes` whole; the error, or none with the parser done.
boost::beast::error_code parse(RequestParser& p, const std::string& bytes) {
  boost::beast::error_code ec;
  p.eager(true);
  p.put(boost::asio::buffer(bytes), ec);
  return ec;
}

ServerOptions small() {
  ServerOptions o;
  o.max_header_bytes = 256;
  o.max_body_bytes = 16;
  return o;
}

TEST(RequestReader, HeaderLimitIs431) {
  RequestParser p;
  apply_limits(p, small());
  const auto ec = parse(p, "GET / HTTP/1.1\r\nX: " + std::string(300, 'a') + "\r\n\r\n");
  ASSERT_EQ(ec, http::error::header_limit);
  const auto r = refusal_for(ec, small());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 431);
  EXPECT_STREQ(r->code, "header_too_large");
  EXPECT_NE(r->message.find("256"), std::string::npos);
}

TEST(RequestReader, BodyLimitFromContentLengthIs413BeforeTheBody) {
  RequestParser p;
  apply_limits(p, small());
  const auto ec = parse(p, "POST / HTTP/1.1\r\nContent-Length: 17\r\n\r\n");
  ASSERT_EQ(ec, http::error::body_limit);
  EXPECT_EQ(refusal_for(ec, small())->status, 413);
}

TEST(RequestReader, ChunkedBodyLimitIs413) {
  RequestParser p;
  apply_limits(p, small());
  const auto ec =
      parse(p, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n123456789\r\n9\r\n123456789\r\n0\r\n\r\n");
  ASSERT_EQ(ec, http::error::body_limit);
  EXPECT_EQ(refusal_for(ec, small())->status, 413);
}

TEST(RequestReader, SyntaxErrorsAre400AndEofIsNoAnswer) {
  for (const std::string bad : {"BAD\r\n\r\n", "GET / HTTP/1.1\r\nNo Colon\r\n\r\n", "GET / HTTP/2.5\r\n\r\n"}) {
    RequestParser p;
    apply_limits(p, small());
    const auto ec = parse(p, bad);
    ASSERT_TRUE(ec) << bad;
    const auto r = refusal_for(ec, small());
    ASSERT_TRUE(r) << bad << ": " << ec.message();
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(r->message.find("malformed HTTP request"), std::string::npos);
  }
  EXPECT_FALSE(refusal_for(http::error::end_of_stream, small()));
  EXPECT_FALSE(refusal_for(http::error::partial_message, small()));
  EXPECT_FALSE(refusal_for(boost::asio::error::connection_reset, small()));
}

TEST(RequestReader, ConversionKeepsOrderSpellingAndBody) {
  RequestParser p;
  apply_limits(p, small());
  ASSERT_FALSE(parse(p, "POST /v1/x?y=1 HTTP/1.1\r\nHost: h\r\nX-Two: a\r\nx-two: b\r\nContent-Length: 3\r\n\r\nabc"));
  ASSERT_TRUE(p.is_done());
  const HttpRequest r = to_http_request(p.release(), false, "10.0.0.1:5");
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.target, "/v1/x?y=1");
  EXPECT_EQ(r.path(), "/v1/x");
  EXPECT_EQ(r.version, 11);
  ASSERT_EQ(r.headers.size(), 4u);
  EXPECT_EQ(r.headers[1].name, "X-Two");
  EXPECT_EQ(r.headers[2].name, "x-two");
  EXPECT_EQ(r.header("X-TWO").value_or(""), "a");  // the first of repeated fields
  EXPECT_EQ(r.body, "abc");
  EXPECT_FALSE(r.secure);
  EXPECT_EQ(r.peer, "10.0.0.1:5");
}

}  // namespace
}  // namespace kvgate::server
