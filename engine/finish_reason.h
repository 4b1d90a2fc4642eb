// Why a request ended: the one finish-reason type of the engine, spelled
// as the OpenAI API's finish_reason where the API has a word for it.
#pragma once

#include <cstdint>
#include <string_view>

namespace kvgate {

enum class FinishReason : uint8_t {
  kStop,       // EOS, a stop token or a stop string
  kLength,     // max_tokens reached
  kCancelled,  // the client went away, or the server shut down
  kError,      // the engine failed (the completion's error says why)
};

constexpr std::string_view finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kError: return "error";
  }
  return "";
}

}  // namespace kvgate
