#include "gateway/cluster/wire/event_wire.h"

#include <bit>
#include <cstring>
#include <string_view>

namespace kvgate::wire {
namespace {

constexpr char kMagic[4] = {'K', 'V', 'E', 'V'};
constexpr uint8_t kVersion = 1;

class Writer {
 public:
  explicit Writer(size_t reserve) { out_.reserve(reserve); }
  template <typename T>
  void put(T v) {  // little-endian hosts only (x86-64, aarch64): checked below
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out_.insert(out_.end(), p, p + sizeof v);
  }
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <typename T>
  T get(std::string_view field) {
    T v;
    need(sizeof v, field);
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  void need(size_t n, std::string_view field) const {
    if (in_.size() - at_ < n)
      throw WireError("block event message truncated at " + std::string(field) + " (byte " + std::to_string(at_) +
                      " of " + std::to_string(in_.size()) + ")");
  }
  size_t left() const { return in_.size() - at_; }
  const std::byte* here() const { return in_.data() + at_; }
  void skip(size_t n) { at_ += n; }

 private:
  std::span<const std::byte> in_;
  size_t at_ = 0;
};

static_assert(std::endian::native == std::endian::little, "the wire format is written as the host stores it");

void put_hash(Writer& w, const cache::Hash128& h) {
  w.put(h.lo);
  w.put(h.hi);
}
cache::Hash128 get_hash(Reader& r, std::string_view field) {
  cache::Hash128 h;
  h.lo = r.get<uint64_t>(field);
  h.hi = r.get<uint64_t>(field);
  return h;
}

}  // namespace

void apply_event(ReplicaDigest& d, const WireEvent& e) {
  TierDigest& t = d[static_cast<size_t>(e.tier)];
  if (e.kind == cache::BlockEventKind::kStored)
    t.add(e.hash);
  else
    t.remove(e.hash);
}

std::vector<std::byte> encode(const EventMessage& m) {
  Writer w(kWireHeaderBytes + 4 + m.events.size() * kWireEventBytes + sizeof(ReplicaDigest));
  w.bytes(kMagic, sizeof kMagic);
  w.put(kVersion);
  w.put(static_cast<uint8_t>(m.type));
  w.put(m.instance);
  w.put(m.seq);
  const cache::KvIdentity& id = m.identity;
  put_hash(w, id.model);
  w.put(id.n_layers);
  w.put(id.n_kv_heads);
  w.put(id.head_dim);
  w.put(id.kv_type);
  w.put(id.block_size);
  w.put(id.hash_scheme);
  if (m.type == EventMessage::Type::kEvents) {
    w.put(static_cast<uint32_t>(m.events.size()));
    for (const WireEvent& e : m.events) {
      w.put(static_cast<uint8_t>(e.kind));
      w.put(static_cast<uint8_t>(e.tier));
      put_hash(w, e.hash);
      put_hash(w, e.parent);
      w.put(e.tenant);
      w.put(e.depth);
    }
  } else {
    for (const TierDigest& t : m.digest) {
      w.put(t.blocks);
      w.put(t.sum_lo);
      w.put(t.xor_hi);
    }
  }
  return w.take();
}

EventMessage decode(std::span<const std::byte> bytes) {
  Reader r(bytes);
  r.need(sizeof kMagic, "magic");
  if (std::memcmp(r.here(), kMagic, sizeof kMagic) != 0) throw WireError("not a block event message (bad magic)");
  r.skip(sizeof kMagic);
  if (const auto v = r.get<uint8_t>("version"); v != kVersion)
    throw WireError("block event message version " + std::to_string(v) + ", this build reads " +
                    std::to_string(kVersion));
  EventMessage m;
  const auto type = r.get<uint8_t>("type");
  if (type != 1 && type != 2) throw WireError("block event message of unknown type " + std::to_string(type));
  m.type = static_cast<EventMessage::Type>(type);
  m.instance = r.get<uint64_t>("instance");
  m.seq = r.get<uint64_t>("seq");
  cache::KvIdentity& id = m.identity;
  id.model = get_hash(r, "identity");
  id.n_layers = r.get<int32_t>("identity");
  id.n_kv_heads = r.get<int32_t>("identity");
  id.head_dim = r.get<int32_t>("identity");
  id.kv_type = r.get<uint8_t>("identity");
  id.block_size = r.get<int32_t>("identity");
  id.hash_scheme = r.get<uint32_t>("identity");
  if (m.type == EventMessage::Type::kEvents) {
    const auto n = r.get<uint32_t>("event count");
    // Checked before anything is allocated: a hostile count cannot ask for memory.
    if (r.left() != static_cast<size_t>(n) * kWireEventBytes)
      throw WireError("block event message holds " + std::to_string(r.left()) + " bytes of events, its count " +
                      std::to_string(n) + " needs " + std::to_string(static_cast<size_t>(n) * kWireEventBytes));
    m.events.resize(n);
    for (WireEvent& e : m.events) {
      const auto kind = r.get<uint8_t>("event kind");
      if (kind > 1) throw WireError("block event of unknown kind " + std::to_string(kind));
      e.kind = static_cast<cache::BlockEventKind>(kind);
      const auto tier = r.get<uint8_t>("event tier");
      if (tier >= kWireTiers) throw WireError("block event of unknown tier " + std::to_string(tier));
      e.tier = static_cast<policies::Tier>(tier);
      e.hash = get_hash(r, "event hash");
      e.parent = get_hash(r, "event parent");
      e.tenant = r.get<TenantId>("event tenant");
      e.depth = r.get<int32_t>("event depth");
    }
  } else {
    for (TierDigest& t : m.digest) {
      t.blocks = r.get<int64_t>("digest");
      t.sum_lo = r.get<uint64_t>("digest");
      t.xor_hi = r.get<uint64_t>("digest");
    }
  }
  if (r.left() != 0) throw WireError("block event message has " + std::to_string(r.left()) + " bytes past its end");
  return m;
}

std::string identity_mismatch_field(const cache::KvIdentity& mine, const cache::KvIdentity& theirs) {
  if (theirs.block_size != mine.block_size) return "block_size";
  if (theirs.kv_type != mine.kv_type) return "kv_type";
  if (theirs.n_layers != mine.n_layers || theirs.n_kv_heads != mine.n_kv_heads || theirs.head_dim != mine.head_dim)
    return "layout";
  if (theirs.hash_scheme != mine.hash_scheme) return "hash_scheme";
  if (theirs.model != mine.model) return "model";
  return "";
}

std::string identity_mismatch(const cache::KvIdentity& mine, const cache::KvIdentity& theirs) {
  const std::string field = identity_mismatch_field(mine, theirs);
  if (field.empty()) return field;
  if (field == "model") return "model fingerprint differs";
  const auto shape = [](const cache::KvIdentity& id) {
    return std::to_string(id.n_layers) + "x" + std::to_string(id.n_kv_heads) + "x" + std::to_string(id.head_dim);
  };
  std::string theirs_v, mine_v;
  if (field == "block_size") {
    theirs_v = std::to_string(theirs.block_size), mine_v = std::to_string(mine.block_size);
  } else if (field == "kv_type") {
    theirs_v = std::to_string(int{theirs.kv_type}), mine_v = std::to_string(int{mine.kv_type});
  } else if (field == "layout") {
    theirs_v = shape(theirs), mine_v = shape(mine);
  } else {
    theirs_v = std::to_string(theirs.hash_scheme), mine_v = std::to_string(mine.hash_scheme);
  }
  std::string out = field;
  out.append(" ").append(theirs_v).append(", ours ").append(mine_v);
  return out;
}

}  // namespace kvgate::wire
