// Arrival offsets for an open-loop run, as `vllm bench serve
// --request-rate` draws them: a Poisson process (exponential gaps with mean
// 1 / rate), the first request at 0; an infinite rate sends all at 0.
// Drawn by inverse CDF from a seeded SplitMix64 stream, not a standard
// library distribution, so the same seed gives the same offsets with any
// compiler.
//
// Pure; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvgate::loadgen {

// Throws kvgate::Error unless rate > 0 (infinity allowed).
std::vector<double> poisson_arrivals(size_t n, double rate, uint64_t seed);

}  // namespace kvgate::loadgen
