// How the parts of a fused weight matrix (Q, K and V; gate and up: see
// device_weights.h) are laid out on the device: the type each part is kept
// in, its dense row size and where its rows start, and the runs of parts a
// GEMM multiplies separately. Host arithmetic only, so that it is tested on
// machines without a GPU; device_weights.cpp does the copies it plans.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/weights_view.h"

namespace kvgate::cuda {

struct FusedLayout {
  // One stored part: kept as `type` (its own, or f32 when widened), dense
  // rows of row_bytes, at byte `offset` of the fused matrix's storage.
  struct Placed {
    WeightType type;
    int64_t rows;
    size_t row_bytes;
    size_t offset;
  };
  WeightType type = WeightType::kF32;  // the whole matrix's, or its first run's when `runs` is not empty
  int64_t rows = 0, cols = 0;
  size_t row_bytes = 0;  // dense_row_bytes(type, cols)
  size_t bytes = 0;      // the storage, all parts
  std::vector<Placed> parts;  // one per input part, in order
  // Empty when every row is `type`. Otherwise the parts are block types
  // that differ, each kept in its own: the maximal runs of neighbouring
  // parts of one type, which a GEMM multiplies one run at a time.
  std::vector<Placed> runs;
};

// The parts (they share cols) kept in their type when they all have one;
// each in its own when they are all block types and differ; else all
// widened to f32. Throws kvgate::Error, naming `what`, when the parts
// differ in width or a part's width is not whole blocks of its type.
FusedLayout plan_fused_layout(std::span<const MatrixView* const> parts, const char* what);

}  // namespace kvgate::cuda
