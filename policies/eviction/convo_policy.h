// convo: S3-FIFO that knows a conversation's next turn replaces the last
// block of its prompt.
//
// On a conversation trace a request's prompt is the previous turn's prompt
// and answer plus the new message, so the next turn shares every block of
// this request's chain but its last one: that block is partial (it ends where
// this prompt ends) and the next prompt fills it with other tokens, so its
// content is almost never asked for again (0.8% on the Mooncake trace).
// Kept, it takes a slot from a block that will be reused.
//
// The pool releases a request's blocks tail first, so the first release after
// a request's hits and inserts is its last block: if it is past the chain's
// first block (which every request shares) it waits in a FIFO of such tails
// and leaves before anything else. Every other block is ordered by an inner
// S3-FIFO with the given parameters (s3fifo_policy.h). A tail that a lookup
// hits (the same prompt again) goes back to the inner policy, as a hit block.
#pragma once

#include <memory>

#include "policies/eviction/eviction_policy.h"
#include "policies/eviction/s3fifo_policy.h"

namespace kvgate::policies {

// Throws PolicyError for parameters out of range (those of S3-FIFO).
std::unique_ptr<EvictionPolicy> make_convo_policy(const S3FifoParams& params = {});

}  // namespace kvgate::policies
