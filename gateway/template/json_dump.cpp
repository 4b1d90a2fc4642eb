#include "gateway/template/json_dump.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gateway/template/template_error.h"
#include "gateway/template/text_mark.h"

namespace kvgate::jinja {
namespace {

// The code point at s[i] (UTF-8), advancing i; invalid bytes as U+FFFD.
uint32_t next_code_point(const std::string& s, std::size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  int extra = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0;
  uint32_t cp = extra == 3 ? b & 0x07u : extra == 2 ? b & 0x0Fu : extra == 1 ? b & 0x1Fu : b;
  if (b >= 0x80 && extra == 0) {
    ++i;
    return 0xFFFD;
  }
  ++i;
  for (; extra > 0; --extra, ++i) {
    if (i >= s.size() || (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) return 0xFFFD;
    cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3Fu);
  }
  return cp;
}

class JsonWriter {
 public:
  JsonWriter(const JsonStyle& style, std::size_t max_bytes) : style_(style), max_(max_bytes) {
    item_sep_ = style.item_separator.value_or(style.indent ? "," : ", ");
    key_sep_ = style.key_separator.value_or(": ");
  }

  void write(const Value& v, int level) {
    if (out_.size() > max_)
      throw TemplateError(TemplateError::Kind::kLimit,
                          "the template built a text longer than " + std::to_string(max_) + " bytes");
    if (level > 200) fail("maximum recursion depth exceeded while encoding a JSON object");
    switch (v.kind()) {
      case Value::Kind::kNone: out_ += "null"; return;
      case Value::Kind::kBool: out_ += v.as_bool() ? "true" : "false"; return;
      case Value::Kind::kInt: out_ += std::to_string(v.as_int()); return;
      case Value::Kind::kFloat: {
        const double d = v.as_float();
        if (std::isnan(d)) {
          out_ += "NaN";
        } else if (std::isinf(d)) {
          out_ += d < 0 ? "-Infinity" : "Infinity";
        } else {
          out_ += float_repr(d);
        }
        return;
      }
      case Value::Kind::kString: write_string(v.as_string()); return;
      case Value::Kind::kList:
        if (v.as_list().generator) break;
        write_list(v.as_list(), level);
        return;
      case Value::Kind::kDict:
        if (v.as_dict().is_namespace) break;
        write_dict(v.as_dict(), level);
        return;
      default: break;
    }
    fail("Object of type " + std::string(v.type_name()) + " is not JSON serializable");
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int level) {
    if (!style_.indent) return;
    if (out_.size() + static_cast<std::size_t>(level) * style_.indent->size() > max_)
      throw TemplateError(TemplateError::Kind::kLimit,
                          "the template built a text longer than " + std::to_string(max_) + " bytes");
    out_ += '\n';
    for (int i = 0; i < level; ++i) out_ += *style_.indent;
  }

  void write_list(const ListData& l, int level) {
    if (l.items.empty()) {
      out_ += "[]";
      return;
    }
    out_ += '[';
    for (std::size_t i = 0; i < l.items.size(); ++i) {
      if (i) out_ += item_sep_;
      newline(level + 1);
      write(l.items[i], level + 1);
    }
    newline(level);
    out_ += ']';
  }

  void write_dict(const DictData& d, int level) {
    if (d.items.empty()) {
      out_ += "{}";
      return;
    }
    std::vector<const std::pair<std::string, Value>*> items;
    for (const auto& item : d.items) items.push_back(&item);
    if (style_.sort_keys)
      std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
    out_ += '{';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) out_ += item_sep_;
      newline(level + 1);
      write_string(items[i]->first);
      out_ += key_sep_;
      write(items[i]->second, level + 1);
    }
    newline(level);
    out_ += '}';
  }

  void write_string(const std::string& s) {
    out_ += '"';
    for (std::size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c < 0x80) {
        ++i;
        switch (c) {
          case '"': out_ += "\\\""; break;
          case '\\': out_ += "\\\\"; break;
          case '\n': out_ += "\\n"; break;
          case '\r': out_ += "\\r"; break;
          case '\t': out_ += "\\t"; break;
          case '\b': out_ += "\\b"; break;
          case '\f': out_ += "\\f"; break;
          default:
            if (c < 0x20 || (style_.ensure_ascii && c == 0x7f)) {
              escape(c);
            } else {
              out_ += static_cast<char>(c);
            }
        }
        continue;
      }
      const std::size_t start = i;
      const uint32_t cp = next_code_point(s, i);
      if (!style_.ensure_ascii || cp == kTextMarkCodePoint) {  // text_mark.h: the mark is never escaped
        out_.append(s, start, i - start);
      } else if (cp >= 0x10000) {
        escape(0xD800 + ((cp - 0x10000) >> 10));
        escape(0xDC00 + ((cp - 0x10000) & 0x3FF));
      } else {
        escape(cp);
      }
    }
    out_ += '"';
  }

  void escape(uint32_t unit) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", unit);
    out_ += buf;
  }

  const JsonStyle& style_;
  std::size_t max_;
  std::string item_sep_;
  std::string key_sep_;
  std::string out_;
};

}  // namespace

std::string to_json(const Value& v, const JsonStyle& style, std::size_t max_bytes) {
  JsonWriter w(style, max_bytes);
  w.write(v, 0);
  std::string out = w.take();
  if (out.size() > max_bytes)
    throw TemplateError(TemplateError::Kind::kLimit,
                        "the template built a text longer than " + std::to_string(max_bytes) + " bytes");
  return out;
}

}  // namespace kvgate::jinja
