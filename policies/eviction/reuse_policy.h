// reuse: evicts the cached chain least likely to be reused soon, by what the
// policy has learned of how long released blocks of each kind of request wait
// before their next use.
//
// On a conversation trace a block is reused when its conversation takes its
// next turn, which comes tens of seconds to minutes later, with a chance that
// depends on what kind of request last used it: a first turn of a few blocks
// is rarely continued, a conversation already several turns long mostly is,
// and the last block of a prompt (a partial block the next turn's prompt
// replaces) is almost never reused. And the chance of a reuse in the next
// moment is not highest right after the release, as LRU assumes, but rises
// with idle time to the typical gap between turns and falls after it.
//
// So each released block is put in a class by the request that released it:
// whether it is that request's last (deepest) block, the conversation's turn
// (the turn stored on the deepest block its prefix hit, plus one) and how many
// blocks it added. Per class the policy keeps a histogram of the idle time
// (counted in block releases) after which blocks were next used: hits on
// cached blocks, and ghosts: content keys of evicted blocks that come back.
// From it, for every idle-time bucket, the class's reuse density: the best
// ratio, over horizons, of the chance of a reuse before the horizon to the
// expected cache time it takes (a Gittins index). The victim is the candidate
// of lowest density; a request's blocks (released together, tail first) share
// their class and age and leave deepest first, so a chain shrinks from its tail
// and a parent never goes before its child of the same release.
//
// Per class the candidates are kept in release order; assuming the density is
// first rising and then falling with idle time, the class's least dense
// candidate is its oldest or its youngest release, so a victim is chosen among
// two candidates a class.
#pragma once

#include <memory>

#include "policies/eviction/eviction_policy.h"

namespace kvgate::policies {

struct ReuseParams {
  double ghost = 4.0;     // evicted blocks remembered, x the tracked entries
  double base = 64;       // the first idle-time bucket's width, in block releases
  double growth = 1.5;    // each further bucket is this much wider
  double period = 1000;   // block releases between recomputing the densities
  double halflife = 0;    // block releases after which the histograms count half; 0: never decay
};

// Throws PolicyError for parameters out of range.
std::unique_ptr<EvictionPolicy> make_reuse_policy(const ReuseParams& params = {});

}  // namespace kvgate::policies
