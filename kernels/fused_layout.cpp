#include "kernels/fused_layout.h"

#include <string>

#include "base/error.h"

namespace kvgate::cuda {

FusedLayout plan_fused_layout(std::span<const MatrixView* const> parts, const char* what) {
  if (parts.empty()) throw Error(std::string("weights: ") + what + " has no parts");
  FusedLayout l;
  l.cols = parts.front()->cols;
  l.type = parts.front()->type;
  bool same = true, blocks = true;
  for (const MatrixView* p : parts) {
    if (p->cols != l.cols) throw Error(std::string("weights: the parts of ") + what + " differ in width");
    if (l.cols % weight_block(p->type).values != 0)
      throw Error(std::string("weights: ") + what + " has a width of " + std::to_string(l.cols) +
                  ", not whole blocks of its type's " + std::to_string(weight_block(p->type).values));
    l.rows += p->rows;
    same = same && p->type == l.type;
    blocks = blocks && is_block_type(p->type);
  }
  // Block types that differ stay apart: widening them all would cost 4
  // bytes a weight where they take 0.56 to 1.06.
  const bool own_types = !same && blocks;
  if (!same && !blocks) l.type = WeightType::kF32;
  l.row_bytes = dense_row_bytes(l.type, l.cols);
  for (const MatrixView* p : parts) {
    const WeightType t = own_types ? p->type : l.type;
    const FusedLayout::Placed placed{t, p->rows, dense_row_bytes(t, l.cols), l.bytes};
    l.parts.push_back(placed);
    if (own_types) {
      if (!l.runs.empty() && l.runs.back().type == t)
        l.runs.back().rows += p->rows;
      else
        l.runs.push_back(placed);
    }
    l.bytes += static_cast<size_t>(p->rows) * placed.row_bytes;
  }
  return l;
}

}  // namespace kvgate::cuda
