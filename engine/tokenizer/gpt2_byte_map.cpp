#include "engine/tokenizer/gpt2_byte_map.h"

#include <array>

#include "engine/tokenizer/utf8.h"

namespace kvgate {
namespace {

bool printable(unsigned b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Tables {
  std::array<std::string, 256> text;
  std::array<int16_t, 0x144> byte_of;  // code points 0 .. 0x143 cover every image

  Tables() {
    byte_of.fill(-1);
    unsigned shifted = 0;
    for (unsigned b = 0; b < 256; ++b) {
      const char32_t cp = printable(b) ? b : 0x100 + shifted++;
      utf8_append(text[b], cp);
      byte_of[cp] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

std::string_view gpt2_byte_to_text(uint8_t b) { return tables().text[b]; }

std::optional<uint8_t> gpt2_char_to_byte(char32_t cp) {
  const Tables& t = tables();
  if (cp >= t.byte_of.size() || t.byte_of[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(t.byte_of[cp]);
}

}  // namespace kvgate
