// The one translation unit that compiles Asio's, Asio SSL's and Beast's
// implementation files (their *.ipp), as their documentation prescribes for
// BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION
// (defined by the kvgate_asio target for all who link it).
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
