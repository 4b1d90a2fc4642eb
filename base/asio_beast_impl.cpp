// The one translation unit that compiles Asio's, Asio SSL's and Beast's
// implementation files (their *.ipp), as their documentation prescribes for
// BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION
// (defined by the kvgate_asio target for all who link it).
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>

// Beast's core and HTTP parts: <boost/beast/src.hpp> less its WebSocket,
// zlib and test-stream files, which kvgate does not use (a use would fail to
// link) and which took more than half of this file's compile time.
#define BOOST_BEAST_SOURCE
#include <boost/beast/core/detail/config.hpp>
#include <boost/beast/core/detail/base64.ipp>
#include <boost/beast/core/detail/impl/temporary_buffer.ipp>
#include <boost/beast/core/detail/sha1.ipp>
#include <boost/beast/core/impl/error.ipp>
#include <boost/beast/core/impl/file_posix.ipp>
#include <boost/beast/core/impl/file_stdio.ipp>
#include <boost/beast/core/impl/flat_static_buffer.ipp>
#include <boost/beast/core/impl/saved_handler.ipp>
#include <boost/beast/core/impl/static_buffer.ipp>
#include <boost/beast/core/impl/string.ipp>
#include <boost/beast/http/detail/basic_parser.ipp>
#include <boost/beast/http/detail/rfc7230.ipp>
#include <boost/beast/http/impl/basic_parser.ipp>
#include <boost/beast/http/impl/error.ipp>
#include <boost/beast/http/impl/field.ipp>
#include <boost/beast/http/impl/fields.ipp>
#include <boost/beast/http/impl/rfc7230.ipp>
#include <boost/beast/http/impl/status.ipp>
#include <boost/beast/http/impl/verb.ipp>
